package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"platd/bolt"
	"platd/security/flowcontrol"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/rest"
)

// FlowControlManager is the field manager of the flow schemas' Dangling
// condition, upstream's.
const FlowControlManager = "api-priority-and-fairness-config-consumer-v1"

// flowControlRetryDelay is how long a failed status write waits before
// the next attempt.
const flowControlRetryDelay = time.Second

// The Dangling condition of a flow schema, as upstream's configuration
// consumer writes it.
const (
	conditionDangling      = "Dangling"
	danglingFound          = "Found"
	danglingNotFound       = "NotFound"
	danglingFoundMessage   = "This FlowSchema references the PriorityLevelConfiguration object named %q and it exists"
	danglingMissingMessage = "This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object"
)

// FlowControl is upstream's priority-and-fairness configuration consumer:
// it keeps Classifier what the stored FlowSchemas and
// PriorityLevelConfigurations say (Load reads them before the first
// request, Run follows the store's watch), and keeps each flow schema's
// Dangling condition (whether the priority level it names exists),
// applied to its status as FlowControlManager.
type FlowControl struct {
	Source                      Source
	Objects                     Objects
	Applier                     Applier
	Classifier                  *flowcontrol.Classifier
	FlowSchemas, PriorityLevels *registry.Descriptor
	// StatusAfter, when set, holds back the status writes until it is
	// closed: they are no part of a start.
	StatusAfter <-chan struct{}
	Log         *slog.Logger

	mu      sync.Mutex
	schemas map[string]*flowSchemaState
	levels  map[string]*flowcontrol.PriorityLevel
	// written is the revision of this controller's last write of each
	// flow schema's condition: until the watch brings it, the schema's
	// state is older than what was written.
	written map[string]int64
	from    [2]int64
	queue   *queue
}

// flowSchemaState is a stored flow schema, its Dangling condition, and
// the revision it was read at.
type flowSchemaState struct {
	fs       *flowcontrol.FlowSchema
	dangling *storedCondition
	rev      int64
}

type storedCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// statusKey is the one key of the status queue: a sync looks at every
// flow schema, and writes those that need it together.
const statusKey = "flowschemas"

// Load reads every stored flow schema and priority level and hands them
// to the classifier.
func (c *FlowControl) Load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schemas = map[string]*flowSchemaState{}
	c.levels = map[string]*flowcontrol.PriorityLevel{}
	c.written = map[string]int64{}
	for i, d := range []*registry.Descriptor{c.FlowSchemas, c.PriorityLevels} {
		res, err := c.Source.List(d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", d.Resource, err)
		}
		for _, kv := range res.Items {
			c.putLocked(i == 0, kv)
		}
		c.from[i] = res.Revision
	}
	c.publishLocked()
	return nil
}

// Run follows the changes from what Load read, and writes the Dangling
// conditions, until ctx ends; it returns once its goroutines have stopped.
func (c *FlowControl) Run(ctx context.Context) {
	ctx = rest.WithManager(ctx, FlowControlManager)
	c.queue = newQueue()
	c.queue.add(statusKey)
	c.queue.workWhile(ctx, c.Log, flowControlRetryDelay, c.syncStatus, func() {
		var wg sync.WaitGroup
		for i, d := range []*registry.Descriptor{c.FlowSchemas, c.PriorityLevels} {
			schemas := i == 0
			wg.Add(1)
			go func() {
				defer wg.Done()
				followFrom(ctx, c.Source, d.ResourcePrefix(), c.from[i], c.Log,
					func(kvs []bolt.KV) { c.replace(schemas, kvs) },
					func(ev bolt.Event) { c.observe(schemas, d, ev) })
			}()
		}
		wg.Wait()
	})
}

// replace makes kvs the only stored objects of one kind.
func (c *FlowControl) replace(schemas bool, kvs []bolt.KV) {
	c.mu.Lock()
	if schemas {
		c.schemas = map[string]*flowSchemaState{}
	} else {
		c.levels = map[string]*flowcontrol.PriorityLevel{}
	}
	for _, kv := range kvs {
		c.putLocked(schemas, kv)
	}
	c.publishLocked()
	c.mu.Unlock()
	c.queue.add(statusKey)
}

func (c *FlowControl) observe(schemas bool, d *registry.Descriptor, ev bolt.Event) {
	c.mu.Lock()
	if ev.Type == bolt.Delete {
		if _, name, ok := d.SplitKey(ev.KV.Key); ok {
			if schemas {
				delete(c.schemas, name)
				delete(c.written, name)
			} else {
				delete(c.levels, name)
			}
		}
	} else {
		c.putLocked(schemas, ev.KV)
	}
	c.publishLocked()
	c.mu.Unlock()
	c.queue.add(statusKey)
}

// putLocked records one stored object; one that does not decode is
// logged and left out.
func (c *FlowControl) putLocked(schema bool, kv bolt.KV) {
	if !schema {
		pl, err := flowcontrol.DecodePriorityLevel(kv.Value)
		if err != nil {
			c.Log.Error("flow control: skipping a priority level", "key", kv.Key, "err", err)
			return
		}
		c.levels[pl.Metadata.Name] = pl
		return
	}
	// One decoding reads what classification needs and the status.
	var stored struct {
		flowcontrol.FlowSchema
		Status struct {
			Conditions []storedCondition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		c.Log.Error("flow control: skipping a flow schema", "key", kv.Key, "err", err)
		return
	}
	st := &flowSchemaState{fs: &stored.FlowSchema, rev: kv.ModRevision}
	for i, cond := range stored.Status.Conditions {
		if cond.Type == conditionDangling {
			st.dangling = &stored.Status.Conditions[i]
		}
	}
	c.schemas[stored.Metadata.Name] = st
}

// publishLocked hands the recorded objects to the classifier.
func (c *FlowControl) publishLocked() {
	schemas := make([]*flowcontrol.FlowSchema, 0, len(c.schemas))
	for _, st := range c.schemas {
		schemas = append(schemas, st.fs)
	}
	levels := make([]*flowcontrol.PriorityLevel, 0, len(c.levels))
	for _, pl := range c.levels {
		levels = append(levels, pl)
	}
	c.Classifier.Replace(schemas, levels)
}

// levelOf is the priority level the flow schema called name names.
func (c *FlowControl) levelOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.schemas[name]; st != nil {
		return st.fs.Spec.PriorityLevelConfiguration.Name
	}
	return ""
}

// danglingCondition is the condition a flow schema should have when the
// priority level it names does (found) or does not exist.
func danglingCondition(level string, found bool) storedCondition {
	if found {
		return storedCondition{Type: conditionDangling, Status: "False", Reason: danglingFound, Message: fmt.Sprintf(danglingFoundMessage, level)}
	}
	return storedCondition{Type: conditionDangling, Status: "True", Reason: danglingNotFound, Message: fmt.Sprintf(danglingMissingMessage, level)}
}

// syncStatus applies the Dangling condition of every flow schema whose
// stored one is missing or says otherwise, all at once so that their
// writes share the store's commits.
func (c *FlowControl) syncStatus(ctx context.Context, _ string) error {
	if !waitClosed(ctx, c.StatusAfter) {
		return nil
	}
	type change struct {
		name string
		cond storedCondition
	}
	var changes []change
	c.mu.Lock()
	for name, st := range c.schemas {
		if st.rev < c.written[name] {
			continue // the watch has not brought the last write yet
		}
		level := st.fs.Spec.PriorityLevelConfiguration.Name
		_, found := c.levels[level]
		want := danglingCondition(level, found)
		if st.dangling == nil || *st.dangling != want {
			changes = append(changes, change{name, want})
		}
	}
	c.mu.Unlock()
	// The two kinds are followed apart: a level written just before its
	// schema may not have come yet. A schema is called dangling only when
	// the store, read now, lacks its level; otherwise the level's event
	// is on its way and brings the schema back here.
	kept := changes[:0]
	for _, ch := range changes {
		if ch.cond.Status == "True" {
			level := c.levelOf(ch.name)
			if level == "" {
				continue // the schema is gone
			}
			_, err := c.Objects.Get(c.PriorityLevels, "", level)
			if err == nil {
				continue
			}
			if apierr.ReasonOf(err) != apierr.ReasonNotFound {
				return err
			}
		}
		kept = append(kept, ch)
	}
	changes = kept
	now := time.Now().UTC().Format(time.RFC3339)
	errs := make([]error, len(changes))
	var wg sync.WaitGroup
	for i, ch := range changes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cond := map[string]any{"type": ch.cond.Type, "status": ch.cond.Status, "lastTransitionTime": now,
				"reason": ch.cond.Reason, "message": ch.cond.Message}
			config := registry.Object{"apiVersion": c.FlowSchemas.GroupVersion(), "kind": c.FlowSchemas.Kind,
				"metadata": map[string]any{"name": ch.name}, "status": map[string]any{"conditions": []any{cond}}}
			out, err := c.Applier.Apply(ctx, c.FlowSchemas, "", ch.name, "status", config, true)
			switch {
			case err == nil:
				if rv, err := strconv.ParseInt(resourceVersionOf(out), 10, 64); err == nil {
					c.mu.Lock()
					c.written[ch.name] = rv
					c.mu.Unlock()
				}
			case apierr.ReasonOf(err) != apierr.ReasonNotFound:
				errs[i] = fmt.Errorf("failed to set a status.condition for FlowSchema %s: %w", ch.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

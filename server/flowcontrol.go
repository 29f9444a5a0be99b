package server

import (
	"fmt"

	"platd/security/flowcontrol"
	"platd/server/controllers"
)

// flowClassifier loads the stored flow schemas and priority levels into
// a classifier of requests, and follows the store with it from when the
// server serves, as upstream's priority-and-fairness configuration
// consumer does; the flow schemas' Dangling conditions are written once
// the start's work is done. Nil when the flow-control API is not served.
func (s *Server) flowClassifier() (*flowcontrol.Classifier, error) {
	g := s.opts.Brand.Group("flowcontrol.apiserver")
	schemas, levels := s.reg.Lookup(g, "v1", "flowschemas"), s.reg.Lookup(g, "v1", "prioritylevelconfigurations")
	if schemas == nil || levels == nil {
		return nil, nil
	}
	c := &controllers.FlowControl{Source: s.store, Objects: s.rest, Applier: s.rest, Classifier: &flowcontrol.Classifier{},
		FlowSchemas: schemas, PriorityLevels: levels, StatusAfter: s.startDone, Log: s.log}
	if err := c.Load(); err != nil {
		return nil, fmt.Errorf("loading the flow-control configuration: %w", err)
	}
	s.background.run(c.Run)
	return c.Classifier, nil
}

//go:build unix

package bolt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// Environment of the crashing child process.
const (
	crashDirEnv  = "PLATD_TEST_DEFRAG_CRASH_DIR"
	crashStepEnv = "PLATD_TEST_DEFRAG_CRASH_STEP"
	// crashAtRun is the rewrite the child crashes in.
	crashAtRun = 3
	// crashAfterAcks is how many writes the child acknowledges before it
	// may crash.
	crashAfterAcks = 150
)

// TestDefragCrash kills a process (SIGKILL) at each step of an online
// rewrite while it writes, then checks that the data directory opens,
// passes CheckFile, holds every acknowledged write and no leftover.
func TestDefragCrash(t *testing.T) {
	t.Parallel()
	steps := map[defragStep]string{stepCopying: "copying", stepCopied: "copied", stepLocked: "locked",
		stepDurable: "durable", stepRenamed: "renamed", stepSwapped: "swapped"}
	for step, name := range steps {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDefragCrashChild$")
			cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStepEnv+"="+strconv.Itoa(int(step)))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			acked := map[string]int64{}
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 3 && f[0] == "ACK" {
					rev, _ := strconv.ParseInt(f[2], 10, 64)
					acked[f[1]] = rev
				}
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child did not crash at step %s: %v", name, err)
			}
			path := filepath.Join(dir, "e.db")
			if err := CheckFile(path); err != nil {
				t.Fatalf("CheckFile: %v", err)
			}
			db, err := Open(path, Options{Stamp: testStamp, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := os.Stat(path + defragSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("leftover rewrite after open: %v", err)
			}
			if len(acked) < crashAfterAcks {
				t.Errorf("only %d writes acknowledged before the crash", len(acked))
			}
			for key, rev := range acked {
				if kv, err := db.Get(key); err != nil || kv.CreateRevision != rev {
					t.Errorf("%s acknowledged at %d: got %+v, %v", key, rev, kv, err)
				}
			}
		})
	}
}

// TestDefragCrashChild is the process TestDefragCrash kills: it rewrites
// its file again and again while writers print each acknowledged create,
// and kills itself at the step named in its environment in its third
// rewrite (at the swap, only after more writes went to the new file).
func TestDefragCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestDefragCrash")
	}
	n, _ := strconv.Atoi(os.Getenv(crashStepEnv))
	step := defragStep(n)
	kill := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	var afterSwap, acks atomic.Int64
	afterSwap.Store(-1)
	seen := 0 // the hook runs on the goroutine calling Defrag
	defragHook = func(s defragStep) {
		if s != step {
			return
		}
		// Crash in a later rewrite, when writes have gone on for a while:
		// counted in acknowledged writes, so a slow machine waits longer.
		if seen++; seen < crashAtRun || acks.Load() < crashAfterAcks {
			return
		}
		if s == stepSwapped {
			afterSwap.CompareAndSwap(-1, 0)
		} else {
			kill()
		}
	}
	ctx := context.Background()
	db, err := Open(filepath.Join(dir, "e.db"), Options{Stamp: testStamp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, 800)
	for b := range 40 {
		var ops []Op
		for i := range 100 {
			ops = append(ops, Op{Kind: OpCreate, Key: fmt.Sprintf("/seed/%02d-%03d", b, i), Value: pad})
		}
		if _, err := db.Txn(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex // one line per write(2)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key := fmt.Sprintf("/w%d/%06d", w, i)
				kv, err := db.Create(ctx, key, pad[:100])
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ACK %s %d\n", key, kv.ModRevision)
				mu.Unlock()
				acks.Add(1)
				if afterSwap.Load() >= 0 && afterSwap.Add(1) > 200 {
					kill()
				}
			}
		}()
	}
	for range 1_000_000 {
		if _, _, err := db.Defrag(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the crash step was never reached")
}

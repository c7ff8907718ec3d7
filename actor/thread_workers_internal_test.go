package actor

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type tdo func(*PE)

func (f tdo) Deliver(pe *PE) { f(pe) }

// runJob runs a job of one PE with boot on it, failing the test if it does
// not end in time, and returns the PE.
func runJob(t *testing.T, boot func(pe *PE)) *PE {
	t.Helper()
	rt, err := Start(Config{PEs: 1}, boot)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := rt.Wait()
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		rt.Abort(nil)
		t.Fatal("the job did not end within 30 s")
	}
	return rt.pes[0]
}

func expect(pe *PE, cond bool, format string, args ...any) {
	if !cond {
		pe.Runtime().Abort(fmt.Errorf(format, args...))
	}
}

// A PE runs its threads on the goroutines of its finished threads: one
// after the other they take one goroutine, which keeps the stack an
// earlier thread grew; threads suspended together need one each, and
// up to maxIdleWorkers of those stay for later threads.
func TestThreadGoroutinesAreReused(t *testing.T) {
	runJob(t, func(pe *PE) {
		for i := range 20 {
			pe.Spawn(nil, func(th *Thread) {
				deep(200) // grows the stack: kept for the next thread
			})
			expect(pe, pe.workersStarted == 1, "thread %d: %d goroutines started, want 1", i, pe.workersStarted)
			expect(pe, len(pe.idleWorkers) == 1, "thread %d: %d idle workers, want 1", i, len(pe.idleWorkers))
		}
		// Seven threads suspended at once: seven goroutines, four kept.
		var ths []*Thread
		for range 7 {
			pe.Spawn(nil, func(th *Thread) {
				ths = append(ths, th)
				th.Suspend()
			})
		}
		expect(pe, pe.workersStarted == 7, "%d goroutines started for 7 suspended threads, want 7 (1 reused)", pe.workersStarted)
		for _, th := range ths {
			th.Resume()
			expect(pe, th.Done(), "a resumed thread did not finish")
		}
		expect(pe, len(pe.idleWorkers) == maxIdleWorkers, "%d idle workers, want %d", len(pe.idleWorkers), maxIdleWorkers)
		pe.Runtime().Exit(0)
	})
}

// A thread that panics is reported as before, and its goroutine runs the
// next thread; one that ends its goroutine (runtime.Goexit) is finished
// for its PE, and the next thread gets a new goroutine.
func TestThreadWorkerAfterPanicAndGoexit(t *testing.T) {
	var recovered error
	runJob(t, func(pe *PE) {
		func() {
			defer func() {
				r := recover()
				recovered, _ = r.(error)
			}()
			pe.Spawn(func() string { return "the panicking thread" }, func(*Thread) { panic("boom") })
		}()
		expect(pe, pe.workersStarted == 1 && len(pe.idleWorkers) == 1, "after a panic: %d started, %d idle", pe.workersStarted, len(pe.idleWorkers))
		ran := false
		pe.Spawn(nil, func(*Thread) { ran = true })
		expect(pe, ran && pe.workersStarted == 1, "the thread after a panic: ran %v, %d started", ran, pe.workersStarted)

		var th *Thread
		pe.Spawn(nil, func(t *Thread) {
			th = t
			runtime.Goexit()
		})
		expect(pe, th.Done(), "a thread that called Goexit is not done")
		expect(pe, len(pe.idleWorkers) == 0, "a goroutine that ended is idle")
		pe.Spawn(nil, func(*Thread) { ran = false })
		expect(pe, !ran && pe.workersStarted == 2, "the thread after Goexit: %d started, want 2", pe.workersStarted)
		pe.Runtime().Exit(0)
	})
	require.Error(t, recovered)
	require.ErrorContains(t, recovered, "the panicking thread")
	require.ErrorContains(t, recovered, "boom")
}

// Threads on a reused goroutine still see the job end: one suspended when
// the job ends unwinds, and the job ends without waiting for it; its
// goroutine leaves the PE alone even when the thread's code recovers.
func TestSuspendedReusedThreadEndsWithTheJob(t *testing.T) {
	unwound := make(chan bool, 1)
	runJob(t, func(pe *PE) {
		pe.Spawn(nil, func(*Thread) {})
		pe.Spawn(nil, func(th *Thread) {
			defer func() { unwound <- recover() == errExited }()
			pe.Send(0, tdo(func(pe *PE) { pe.Runtime().Exit(0) }))
			th.Suspend()
			panic(errors.New("resumed after the job ended"))
		})
		expect(pe, pe.workersStarted == 1, "%d goroutines started, want 1", pe.workersStarted)
	})
	select {
	case ok := <-unwound:
		require.True(t, ok, "the suspended thread unwound with errExited")
	case <-time.After(30 * time.Second):
		t.Fatal("the suspended thread did not unwind within 30 s of the job's end")
	}
}

//go:noinline
func deep(n int) byte {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[(n*3)%256]
}

// peGoroutinesEnd fails the test unless every PE goroutine of rt and
// every goroutine of its threads returns within 10 s of the job's end.
func peGoroutinesEnd(t *testing.T, rt *Runtime) {
	t.Helper()
	gone := make(chan struct{})
	go func() { rt.goroutines.Wait(); close(gone) }()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("a PE or thread goroutine did not return after the job ended (stuck resuming or starting a thread?)")
	}
}

// A thread resumed after the job ended (the handler that called Exit
// resumes it, as wakeNaps does after the message that ended the job) has
// left Suspend by the end: the PE does not wait for it, its goroutine
// returns and releases the PE's idle workers.
func TestResumeAfterEndDoesNotHangPE(t *testing.T) {
	for range 20 {
		rt, err := Start(Config{PEs: 1}, func(pe *PE) {
			var th *Thread
			pe.Spawn(nil, func(t *Thread) { th = t; t.Suspend() }) // suspended
			pe.Spawn(nil, func(*Thread) {})                        // its worker stays idle
			pe.Send(0, tdo(func(pe *PE) {
				pe.Runtime().Exit(0)
				th.Resume()
			}))
		})
		require.NoError(t, err)
		_, err = rt.Wait()
		require.NoError(t, err)
		peGoroutinesEnd(t, rt)
	}
	for range 20 { // a thread spawned after the exit: neither side waits for the other
		rt, err := Start(Config{PEs: 1}, func(pe *PE) {
			pe.Runtime().Exit(0)
			pe.Spawn(nil, func(*Thread) {})
		})
		require.NoError(t, err)
		_, err = rt.Wait()
		require.NoError(t, err)
		peGoroutinesEnd(t, rt)
	}
	for range 10 { // the same through a nap woken after the exit
		rt, err := Start(Config{PEs: 1}, func(pe *PE) {
			pe.Spawn(nil, func(t *Thread) { t.Nap(0) })
			pe.Send(0, tdo(func(pe *PE) { pe.Runtime().Exit(0) }))
		})
		require.NoError(t, err)
		_, err = rt.Wait()
		require.NoError(t, err)
		peGoroutinesEnd(t, rt)
	}
}

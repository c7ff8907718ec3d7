package core

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/charmgo/charm/actor"
)

// CallbackKind says what a callback does with its value.
type CallbackKind uint8

const (
	CallbackIgnore CallbackKind = iota // drop the value (CkCallback::ignore)
	CallbackEntry                      // invoke an entry method (or broadcast one)
	CallbackFuture                     // fulfil a future
	CallbackFunc                       // call a Go function on a PE
	CallbackExit                       // end the job (CkCallback::ckExit)
)

var callbackKinds = [...]string{"ignore", "entry", "future", "function", "exit"}

func (k CallbackKind) String() string {
	if int(k) < len(callbackKinds) {
		return callbackKinds[k]
	}
	return fmt.Sprintf("callback kind %d", k)
}

// Callback is where a result goes: an entry method of a chare, a group
// branch or an array element, a broadcast to a group or array, a future, a
// Go function on a PE, nowhere, or the end of the job. Callbacks are values
// and can travel in messages.
type Callback struct {
	Kind   CallbackKind
	Route  Route     `msgpack:",omitempty"`
	Entry  EntryID   `msgpack:",omitempty"`
	Future futureRef `msgpack:",omitempty"`
	Func   uint64    `msgpack:",omitempty"`
	PE     int       `msgpack:",omitempty"`
	Code   int       `msgpack:",omitempty"`
	del    Delegate  // the delegate of the proxy an entry callback was made from
	err    error
}

// IgnoreCallback drops the value.
func IgnoreCallback() Callback { return Callback{Kind: CallbackIgnore} }

// ExitCallback ends the job with the given exit code when called.
func ExitCallback(code int) Callback { return Callback{Kind: CallbackExit, Code: code} }

// EntryCallback invokes method with the callback's value as its message;
// through a group or array proxy it broadcasts. A callback made from a
// delegated proxy sends through the proxy's delegate, and carries it
// wherever the callback travels, as the proxy would; make it from
// p.Undelegate() to send directly (a bracketed strategy, for one, takes
// sends only between a source's BeginIteration and EndIteration). The
// value must be of the
// method's message type (numbers convert between numeric types, so a
// method taking float64 is a typed reduction target for a float sum).
func EntryCallback[T, M any](to Target[T], method func(*T, M)) Callback {
	e, err := lookupEntry(method)
	if err != nil {
		return Callback{Kind: CallbackEntry, err: err}
	}
	installInvoke(e, method)
	p := to.proxy()
	return Callback{Kind: CallbackEntry, Route: p.route, Entry: e.ID, del: p.del}
}

// EntryCallback0 invokes a method without a message; the callback's value
// is dropped (a barrier's target).
func EntryCallback0[T any](to Target[T], method func(*T)) Callback {
	e, err := lookupEntry(method)
	if err != nil {
		return Callback{Kind: CallbackEntry, err: err}
	}
	installInvoke0(e, method)
	p := to.proxy()
	return Callback{Kind: CallbackEntry, Route: p.route, Entry: e.ID, del: p.del}
}

var (
	funcs    sync.Map // uint64 → func(Context, any)
	funcNext atomic.Uint64
	funcLive atomic.Int64 // entries in funcs
)

// FuncCallback calls fn on PE pe with the callback's value. The function
// lives in this process, as long as the job of from: the callback cannot
// be used by another process, nor once its job has ended (the process
// then forgets fn, and what it refers to can be collected). It may be sent
// any number of times: make one for a recurring event and reuse it, not
// one per step; NumFuncCallbacks counts those held.
func FuncCallback(from Context, pe int, fn func(ctx Context, value any)) Callback {
	p, err := peFrom(from)
	if err != nil {
		return Callback{Kind: CallbackFunc, err: err}
	}
	id := funcNext.Add(1)
	funcs.Store(id, fn)
	funcLive.Add(1)
	p.job.funcMu.Lock()
	p.job.funcIDs = append(p.job.funcIDs, id)
	p.job.funcMu.Unlock()
	return Callback{Kind: CallbackFunc, Func: id, PE: pe}
}

// dropFuncs forgets the function callbacks the job made, when it ends.
func (j *Job) dropFuncs() {
	j.funcMu.Lock()
	ids := j.funcIDs
	j.funcIDs = nil
	j.funcMu.Unlock()
	for _, id := range ids {
		if _, ok := funcs.LoadAndDelete(id); ok {
			funcLive.Add(-1)
		}
	}
}

// NumFuncCallbacks returns how many function callbacks this process
// holds: a count that grows with every step of a program, or from job to
// job, shows a leak.
func NumFuncCallbacks() int { return int(funcLive.Load()) }

// Send delivers v through the callback.
func (cb Callback) Send(from Context, v any) error {
	if cb.err != nil {
		return cb.err
	}
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	switch cb.Kind {
	case CallbackIgnore:
		return nil
	case CallbackExit:
		pe.job.rt.Exit(cb.Code)
		return nil
	case CallbackFuture:
		return pe.setFuture(cb.Future, v)
	case CallbackFunc:
		fn, ok := funcs.Load(cb.Func)
		if !ok {
			return fmt.Errorf("chare: function callback %d is unknown in this process (made in another process, or by a job that ended)", cb.Func)
		}
		if cb.PE < 0 || cb.PE >= pe.NumPEs() {
			return fmt.Errorf("chare: function callback to PE %d: no such PE (the job has %d)", cb.PE, pe.NumPEs())
		}
		if !pe.job.rt.IsLocal(cb.PE) {
			return fmt.Errorf("chare: function callback to PE %d: a Go function cannot be called in another process (PE %d is on node %d)", cb.PE, cb.PE, pe.job.rt.NodeOf(cb.PE))
		}
		pe.ap.Send(cb.PE, funcCall{fn: fn.(func(Context, any)), val: v})
		return nil
	case CallbackEntry:
		e, err := EntryByID(cb.Entry)
		if err != nil {
			return err
		}
		if e.Msg == nil {
			v = nil
		}
		return pe.post(cb.Route, cb.del, from, pe.newEnvDyn(cb.Route, e, v))
	}
	return fmt.Errorf("chare: callback of unknown kind %d", cb.Kind)
}

type funcCall struct {
	fn  func(Context, any)
	val any
}

func (f funcCall) Deliver(ap *actor.PE) { f.fn(ContextOf(peOf(ap)), f.val) }
func (f funcCall) Describe() string     { return "a function callback" }

// describe names a callback in an error message.
func (cb Callback) describe() string {
	switch cb.Kind {
	case CallbackFuture:
		return fmt.Sprintf("future %d on PE %d", cb.Future.ID, cb.Future.PE)
	case CallbackFunc:
		return fmt.Sprintf("function %d on PE %d", cb.Func, cb.PE)
	case CallbackExit:
		return fmt.Sprintf("exit %d", cb.Code)
	case CallbackEntry:
		name := fmt.Sprintf("entry %d", cb.Entry)
		if e, err := EntryByID(cb.Entry); err == nil {
			name = e.String()
		}
		return fmt.Sprintf("%s of %v", name, cb.Route.Coll)
	}
	return cb.Kind.String()
}

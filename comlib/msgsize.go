package comlib

import (
	"reflect"
	"sync"

	"github.com/charmgo/charm/chare"
)

// msgSize is a message's size for Auto's msg_size: Size() if its type has
// one (Sizer); else fixed-size fields count their size, and slices and
// strings at the top level of the message (or of a struct message) their
// contents. Deeper structure is not walked: the estimate costs a few
// field reads per send, not an encoding.
func msgSize(env chare.Envelope) int { return MessageSize(payload(env)) }

// payload returns env's message as an interface without copying it into
// one (which allocates for a message that is not a pointer): a pointer to
// it, or the message itself if it is a pointer or an interface, so that
// its methods (Sizer, Urgent) are found either way; nil if it has none.
func payload(env chare.Envelope) any {
	p := env.PayloadRef()
	rv := reflect.ValueOf(p)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return p // the message itself (held as an interface), or nil
	}
	if k := rv.Elem().Kind(); k == reflect.Pointer || k == reflect.Interface {
		return rv.Elem().Interface() // a pointer or an interface: no allocation
	}
	return p
}

// MessageSize is the size Auto's msg_size sees for a message v (see
// msgSize): what to declare in AutoOptions.MsgSize for an exchange of
// messages like v.
func MessageSize(v any) int {
	if v == nil {
		return 0
	}
	if s, ok := v.(Sizer); ok {
		return s.Size()
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return 0
		}
		rv = rv.Elem()
	}
	plan := sizePlanOf(rv.Type())
	n := plan.fixed
	if plan.top {
		return n + contentSize(rv)
	}
	for _, f := range plan.fields {
		n += contentSize(rv.Field(f))
	}
	return n
}

// sizePlan is how to estimate the size of values of one type.
type sizePlan struct {
	fixed  int   // bytes of the fixed-size part
	top    bool  // the value itself is a slice or string
	fields []int // a struct's slice and string fields
}

var sizePlans sync.Map // reflect.Type → *sizePlan

func sizePlanOf(t reflect.Type) *sizePlan {
	if p, ok := sizePlans.Load(t); ok {
		return p.(*sizePlan)
	}
	p := &sizePlan{}
	switch t.Kind() {
	case reflect.Slice, reflect.String:
		p.top = true
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			switch f.Type.Kind() {
			case reflect.Slice, reflect.String:
				p.fields = append(p.fields, i)
			case reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
				p.fixed += 8
			default:
				p.fixed += int(f.Type.Size())
			}
		}
	default:
		p.fixed = int(t.Size())
	}
	sizePlans.Store(t, p)
	return p
}

// contentSize is the bytes a slice or string holds: length times the
// element's size (8 per element that is itself a reference).
func contentSize(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		e := v.Type().Elem()
		switch e.Kind() {
		case reflect.Slice, reflect.String, reflect.Map, reflect.Pointer, reflect.Interface:
			return 8 * v.Len()
		}
		return int(e.Size()) * v.Len()
	}
	return 0
}

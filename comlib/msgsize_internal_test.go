package comlib

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

type sizeMain struct{ chare.Chare[sizeMain] }

type sizeBlock struct {
	From, To int64
	Pad      []byte
}

type sizedBlock struct{ N int }

func (b *sizedBlock) Size() int { return b.N } // a Sizer by its pointer

func (*sizeMain) Block(sizeBlock)    {}
func (*sizeMain) Ptr(*sizeBlock)     {}
func (*sizeMain) Sized(sizedBlock)   {}
func (*sizeMain) Urgent(urgentBlock) {}
func (*sizeMain) Any(any)            {}
func (urgentBlock) Urgent() bool     { return true }
func init()                          { chare.Register[sizeMain]() }

type urgentBlock struct{ X [3]int }

// TestMsgSizeAllocatesNothing: a Comlib send sizes its message for the
// statistics (and Auto) without copying it into an interface, and finds
// the same size, Sizer and Urgent methods as MessageSize does with the
// message itself, for value, pointer and interface messages.
func TestMsgSizeAllocatesNothing(t *testing.T) {
	var checks []func(t *testing.T)
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *sizeMain, _ []string) {
		defer m.Exit(0)
		b := sizeBlock{Pad: make([]byte, 100)}
		val, err1 := core.EnvelopeFor(m, (*sizeMain).Block, b)
		ptr, err2 := core.EnvelopeFor(m, (*sizeMain).Ptr, &b)
		sized, err3 := core.EnvelopeFor(m, (*sizeMain).Sized, sizedBlock{N: 7})
		urgent, err4 := core.EnvelopeFor(m, (*sizeMain).Urgent, urgentBlock{})
		boxed, err5 := core.EnvelopeFor[sizeMain, any](m, (*sizeMain).Any, &b)
		allocs := testing.AllocsPerRun(100, func() { msgSize(val) })
		sizes := []int{msgSize(val), msgSize(ptr), msgSize(sized), msgSize(boxed)}
		_, isUrgent := payload(urgent).(Urgent)
		checks = append(checks, func(t *testing.T) {
			for _, err := range []error{err1, err2, err3, err4, err5} {
				require.NoError(t, err)
			}
			require.Zero(t, allocs, "allocations sizing a value message")
			want := MessageSize(b)
			require.Equal(t, []int{want, want, 7, want}, sizes, "value, pointer, Sizer by pointer, interface")
			require.True(t, isUrgent, "an Urgent value message")
		})
	})
	require.NoError(t, err)
	require.Zero(t, code)
	require.Len(t, checks, 1)
	checks[0](t)
}

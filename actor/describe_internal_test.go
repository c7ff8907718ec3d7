package actor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// unsendable is a message of no registered wire kind.
type unsendable struct{}

func (unsendable) Deliver(*PE) {}

// unsendableNamed is one that names itself, as the runtime's envelopes do.
type unsendableNamed struct{ unsendable }

func (unsendableNamed) Describe() string { return "Worker.Step on element 3 of array 1" }

// An encoding error names the message as its Describe says, not as the
// Go type that carries it; a message without Describe by its Go type.
func TestEncodeErrorDescribesMessage(t *testing.T) {
	ie := newItemEncoder()
	_, err := ie.add(nil, 3, unsendableNamed{})
	require.EqualError(t, err, "actor: Worker.Step on element 3 of array 1 cannot be sent to PE 3 in another process")
	_, err = ie.add(nil, 3, unsendable{})
	require.EqualError(t, err, "actor: actor.unsendable cannot be sent to PE 3 in another process")
}

package bracket

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/route"
)

// TestC06_ExchangeWithOneParticipant: when every source is on one PE (a
// one-PE job, or all elements gathered on one PE), the routers that need
// no stage for one participant (tree, hypercube, prefix: Stages() == 0)
// still end the exchange and deliver its messages. It used to step past
// the last stage and loop for ever.
func TestC06_ExchangeWithOneParticipant(t *testing.T) {
	for _, name := range route.Names() {
		t.Run(name, func(t *testing.T) {
			mk := func(n, _ int) (Router, error) { return route.New(name, n, route.Options{}) }
			done := make(chan []Msg[payload], 1)
			errs := make(chan error, 1)
			go func() {
				p := NewPE[payload](0, Options{}, mk)
				var got []Msg[payload]
				collect := func(fx Effects[payload], err error) bool {
					if err == nil && len(fx.Errors) > 0 {
						err = fx.Errors[0]
					}
					if err != nil {
						errs <- err
						return false
					}
					got = append(got, fx.Deliver...)
					for _, ms := range fx.Runs {
						got = append(got, ms...)
					}
					got = append(got, fx.Direct...)
					return true
				}
				if !collect(p.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 0, "b": 0}})) ||
					!collect(p.Begin("a", 1)) || !collect(p.Begin("b", 1)) ||
					!collect(p.Send("a", 0, "b", payload{0, 1, 1})) || !collect(p.Send("b", 0, "a", payload{1, 0, 1})) ||
					!collect(p.End("a")) || !collect(p.End("b")) {
					return
				}
				done <- got
			}()
			select {
			case got := <-done:
				require.Len(t, got, 2, "both messages delivered once")
				require.ElementsMatch(t, []payload{{0, 1, 1}, {1, 0, 1}}, []payload{got[0].Payload, got[1].Payload})
			case err := <-errs:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatalf("the %s exchange among one participant did not end within 5s", name)
			}
		})
	}
}

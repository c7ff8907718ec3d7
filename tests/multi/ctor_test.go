package multi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/jobtest"
)

// greeter greets its right neighbour from its constructor (issue 14,
// item 1): on -p 2 this recursed until the stack overflowed, and with
// three processes the others reported the array as never announced.
type greeter struct {
	array.Element[greeter, int]
	Done chare.Callback
}

type greetInit struct {
	N    int
	Done chare.Callback
}

func (g *greeter) Init(m greetInit) {
	g.Done = m.Done
	if err := chare.Send(g, g.ThisProxy().At((g.ThisIndex()+1)%m.N), (*greeter).Hello, g.ThisIndex()); err != nil {
		g.Abort(err)
	}
}

func (g *greeter) Hello(from int) {
	if err := g.Contribute(from, reducer.SumInt, g.Done); err != nil {
		g.Abort(err)
	}
}

func init() { chare.Register[greeter]() }

func TestConstructorSendsAcrossThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	const n = 30
	var sum int
	code, err := chare.Run(chare.Config{PEs: 6, Nodes: 3, Launch: jobtest.Launch(t), Timeout: 60 * time.Second},
		func(m *sumMain, _ []string) {
			f := chare.NewFuture[int](m)
			_, err := array.NewWith(m, array.Dims(n), (*greeter).Init, greetInit{N: n, Done: f.Callback()})
			if err != nil {
				m.Abort(err)
				return
			}
			if sum, err = f.Get(m); err != nil {
				m.Abort(err)
				return
			}
			m.Exit(0)
		})
	jobtest.ExitNode(code)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, n*(n-1)/2, sum, "every element greeted once")
}

package rt_test

import (
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Entry methods that return a value: chare.Call0 calls one without a
// message, and chare.SendR and SendR0 send to one (to a chare, a group, an
// array, a section) and drop its result. Across processes the calls and
// sends are decoded on the receiving side from the entry's description.

// callCounter keeps a total that its sync entry methods change.
type callCounter struct {
	chare.Chare[callCounter]
	N    int
	Seen []int
}

// Add adds x and returns the new total.
func (c *callCounter) Add(x int) int {
	c.N += x
	c.Seen = append(c.Seen, x)
	return c.N
}

// Bump adds one and returns the new total: a sync entry method without a
// message.
func (c *callCounter) Bump() int {
	c.N++
	c.Seen = append(c.Seen, 1)
	return c.N
}

// Total returns the total and what was added, in order.
func (c *callCounter) Total() callTotal { return callTotal{c.N, c.Seen} }

type callTotal struct {
	N    int
	Seen []int
}

// callBranch and callElem contribute to a sum from entry methods whose
// results SendR drops.
type callBranch struct {
	group.Branch[callBranch]
	done chare.Callback
}

type callElem struct {
	array.Element[callElem, int]
	done chare.Callback
}

type callPing struct {
	X    int
	Done chare.Callback
}

// Init keeps where Tick contributes to.
func (b *callBranch) Init(done chare.Callback) { b.done = done }

// Ping contributes X plus the branch's PE, and returns a value to drop.
func (b *callBranch) Ping(m callPing) int {
	inJob.NoError(b.Contribute(m.X+b.PE(), sumInt{}, m.Done))
	return -1
}

// Tick contributes the branch's PE, and returns a value to drop.
func (b *callBranch) Tick() string {
	inJob.NoError(b.Contribute(b.PE(), sumInt{}, b.done))
	return "dropped"
}

// Ping contributes X plus the element's index, and returns a value to
// drop.
func (e *callElem) Ping(m callPing) int {
	inJob.NoError(e.Contribute(m.X+e.ThisIndex(), sumInt{}, m.Done))
	return -1
}

type callPingSec struct {
	X    int
	Sec  *chare.Section
	Done chare.Callback
}

// PingSection contributes X plus the element's index to a reduction over
// the section, and returns a value to drop.
func (e *callElem) PingSection(m callPingSec) int {
	inJob.NoError(e.ContributeTo(m.Sec, m.X+e.ThisIndex(), sumInt{}, m.Done))
	return -1
}

func init() {
	chare.Register[callCounter]()
	chare.Register[callBranch]()
	chare.Register[callElem]()
}

func TestCall0AndSendR(t *testing.T) {
	const pes = 3
	runMain(t, pes, func(m *tmain) {
		c, err := chare.New[callCounter](m, pes-1)
		inJob.NoError(err)

		// Sends to sync entry methods, results dropped; then sync calls,
		// with and without a message. From one sender, they run in order.
		inJob.NoError(chare.SendR(m, c, (*callCounter).Add, 5))
		inJob.NoError(chare.SendR0(m, c, (*callCounter).Bump))
		inJob.NoError(chare.SendR(m, c, (*callCounter).Add, 10))
		bump, err := chare.Call0(m, c, (*callCounter).Bump)
		inJob.NoError(err)
		inJob.Equal(17, get(m, bump))
		add, err := chare.Call(m, c, (*callCounter).Add, 3)
		inJob.NoError(err)
		inJob.Equal(20, get(m, add))
		total, err := chare.Call0(m, c, (*callCounter).Total)
		inJob.NoError(err)
		inJob.Equal(callTotal{20, []int{5, 1, 10, 1, 3}}, get(m, total))

		// Broadcasts and a multicast to methods that return a value.
		sum := chare.NewFuture[int](m)
		g, err := group.NewWith(m, (*callBranch).Init, sum.Callback())
		inJob.NoError(err)
		inJob.NoError(chare.SendR0(m, g, (*callBranch).Tick))
		inJob.Equal(0+1+2, get(m, sum))
		sum = chare.NewFuture[int](m)
		inJob.NoError(chare.SendR(m, g, (*callBranch).Ping, callPing{100, sum.Callback()}))
		inJob.Equal(3*100+0+1+2, get(m, sum))

		const n = 7
		a, err := array.New[callElem](m, array.Dims(n))
		inJob.NoError(err)
		sum = chare.NewFuture[int](m)
		inJob.NoError(chare.SendR(m, a, (*callElem).Ping, callPing{1000, sum.Callback()}))
		inJob.Equal(n*1000+n*(n-1)/2, get(m, sum))
		s, err := a.Section(m, []int{1, 4, 6})
		inJob.NoError(err)
		sum = chare.NewFuture[int](m)
		inJob.NoError(chare.SendR(m, s, (*callElem).PingSection, callPingSec{10, s.Info(), sum.Callback()}))
		inJob.Equal(30+1+4+6, get(m, sum))

		// Call0 needs one target, as Call does.
		_, err = chare.Call0(m, g, (*callBranch).Tick)
		inJob.ErrorContains(err, "chare: Call0 needs one chare, branch or element, not a group broadcast")
	})
}

package selection

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: no input panics; whatever loads is complete, so every set of facts selects a
// container, pruning agrees with the full walk, and the tree survives a round trip.
func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile("testdata/alltoall.json")
	require.NoError(f, err)
	f.Add(raw)
	for _, s := range []string{
		`{"comm_type=intra":{"strategy=a":{"k=2":{}}},"comm_type=inter":{"strategy=b":{}}}`,
		`{"coll_size<=8":{"msg_size<=1":{"router=mesh":{}},"msg_size=any":{"schedule=pairwise":{}}},"comm_size=any":{"strategy=x":{}}}`,
		`{"collective=stream":{"strategy=a":{}},"collective=any":{"strategy=b":{}}}`,
		`{"msg_size<=":{}}`, `{"a":[1,2]}`, `{"strategy=a":{"k=2":{"j":{}}}}`, `[`, `{"x":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(data, opts)
		if err != nil {
			require.Nil(t, tr)
			require.NotEmpty(t, err.Error())
			return
		}
		js := marshal(t, tr)
		again, err := Parse([]byte(js), opts)
		require.NoError(t, err, js)
		require.Equal(t, js, marshal(t, again))
		for _, c := range []CreationFacts{
			{CommSize: 1, CommType: Intra, Collective: Alltoall},
			{CommSize: 8, CommType: Inter, Collective: Stream},
			{CommSize: 12, CommType: Inter, Collective: Multicast},
			{CommSize: 1 << 20, CommType: Intra, Collective: Broadcast},
		} {
			p, err := tr.Prune(c)
			require.NoError(t, err)
			require.LessOrEqual(t, p.Size(), tr.Size())
			for _, m := range []int{0, 256, 1 << 40} {
				want, _, err := tr.Walk(c, CallFacts{MsgSize: m})
				require.NoError(t, err)
				got, _, err := p.Select(CallFacts{MsgSize: m})
				require.NoError(t, err)
				require.Equal(t, want, got)
				if m == 0 {
					continue // 0 declares nothing
				}
				// Declared at creation: one container, the same one.
				d := c
				d.MsgSize = m
				pd, err := tr.Prune(d)
				require.NoError(t, err)
				fixed, _, ok := pd.Fixed()
				require.True(t, ok)
				require.Equal(t, want, fixed)
			}
		}
	})
}

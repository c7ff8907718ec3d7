package msgp

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

func TestTypeCodesMatchMsgpcode(t *testing.T) {
	pairs := []struct {
		ours   byte
		theirs byte
	}{
		{PosFixMax, msgpcode.PosFixedNumHigh}, {NegFixLow, msgpcode.NegFixedNumLow},
		{FixMapLo, msgpcode.FixedMapLow}, {FixMapHi, msgpcode.FixedMapHigh},
		{FixArrLo, msgpcode.FixedArrayLow}, {FixArrHi, msgpcode.FixedArrayHigh},
		{FixStrLo, msgpcode.FixedStrLow}, {FixStrHi, msgpcode.FixedStrHigh},
		{Nil, msgpcode.Nil}, {False, msgpcode.False}, {True, msgpcode.True},
		{Bin8, msgpcode.Bin8}, {Bin16, msgpcode.Bin16}, {Bin32, msgpcode.Bin32},
		{Ext8, msgpcode.Ext8}, {Ext32, msgpcode.Ext32},
		{Float, msgpcode.Float}, {Double, msgpcode.Double},
		{Uint8, msgpcode.Uint8}, {Uint16, msgpcode.Uint16}, {Uint32, msgpcode.Uint32}, {Uint64, msgpcode.Uint64},
		{Int8, msgpcode.Int8}, {Int16, msgpcode.Int16}, {Int32, msgpcode.Int32}, {Int64, msgpcode.Int64},
		{FixExt1, msgpcode.FixExt1}, {FixExt16, msgpcode.FixExt16},
		{Str8, msgpcode.Str8}, {Str16, msgpcode.Str16}, {Str32, msgpcode.Str32},
		{Arr16, msgpcode.Array16}, {Arr32, msgpcode.Array32},
		{Map16, msgpcode.Map16}, {Map32, msgpcode.Map32},
	}
	for i, p := range pairs {
		require.Equal(t, p.theirs, p.ours, "pair %d", i)
	}
}

package msgp

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// TestTypeCodesMatchMsgpcode checks the table against msgpack/v5.
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
		{Ext8, msgpcode.Ext8}, {Ext16, msgpcode.Ext16}, {Ext32, msgpcode.Ext32},
		{Float, msgpcode.Float}, {Double, msgpcode.Double},
		{Uint8, msgpcode.Uint8}, {Uint16, msgpcode.Uint16}, {Uint32, msgpcode.Uint32}, {Uint64, msgpcode.Uint64},
		{Int8, msgpcode.Int8}, {Int16, msgpcode.Int16}, {Int32, msgpcode.Int32}, {Int64, msgpcode.Int64},
		{FixExt1, msgpcode.FixExt1}, {FixExt16, msgpcode.FixExt16},
		{Unused, 0xc1}, // msgpack's one unused code: msgpcode has no name for it
		{Str8, msgpcode.Str8}, {Str16, msgpcode.Str16}, {Str32, msgpcode.Str32},
		{Arr16, msgpcode.Array16}, {Arr32, msgpcode.Array32},
		{Map16, msgpcode.Map16}, {Map32, msgpcode.Map32},
	}
	for i, p := range pairs {
		require.Equal(t, p.theirs, p.ours, "pair %d", i)
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		code byte
		want string
	}{
		{0x00, "an integer"}, {0x7f, "an integer"}, {0xe0, "an integer"}, {Uint64, "an integer"}, {Int8, "an integer"},
		{FixMapLo, "a map"}, {Map32, "a map"}, {FixArrHi, "an array"}, {Arr16, "an array"},
		{FixStrLo, "a string"}, {Str32, "a string"}, {Nil, "nil"}, {True, "a bool"}, {False, "a bool"},
		{Bin8, "binary"}, {Bin32, "binary"}, {Float, "a float"}, {Double, "a float"},
		{Ext16, "an extension"}, {FixExt16, "an extension"}, {Unused, "the unused code 0xc1"},
	} {
		require.Equal(t, c.want, Describe(c.code), "%#x", c.code)
	}
	require.True(t, IsStr(FixStrHi) && IsStr(Str16) && !IsStr(Bin8) && !IsStr(FixArrLo))
	require.True(t, IsBin(Bin8) && IsBin(Bin32) && !IsBin(Str8) && !IsBin(Ext8))
	require.Equal(t, "nil", Found(true, 3))
	require.Equal(t, "3", Found(false, 3))
}

// Package wirekind is the one table of the kinds of message that cross
// processes: every kind's number, the package that owns it and what it
// carries. The number is what a frame's item carries on the wire
// (package actor/wire), so a kind's number never changes once released;
// new kinds take numbers not used below. Numbers are 1..0x7fff (the top
// bit marks control messages).
//
// A package registers its kinds' decoders with package actor under these
// constants; the table is checked for duplicates when the program starts,
// and a test pins every number.
package wirekind

import "fmt"

// The kinds, grouped by owner.
const (
	// actor: quiescence and completion detection.
	WaveDown  uint16 = 1
	WaveUp    uint16 = 2
	QDReq     uint16 = 3
	QDFire    uint16 = 4
	CDBegin   uint16 = 5
	CDInit    uint16 = 6
	CDInitAck uint16 = 7
	CDPoke    uint16 = 8
	CDFire    uint16 = 9
	QDPoke    uint16 = 10

	// chare: envelopes, collections, futures, reductions, checkpoints.
	Envelope     uint16 = 100
	Create       uint16 = 101
	Announce     uint16 = 102
	Future       uint16 = 103
	Reduction    uint16 = 104
	CkptStart    uint16 = 105
	CkptCollect  uint16 = 106
	CkptPart     uint16 = 107
	Restore      uint16 = 108
	RestoreFence uint16 = 109
	RestoreAck   uint16 = 110

	// array: the location manager.
	ArrayLoc    uint16 = 120
	ArrayMove   uint16 = 121
	ArrayArrive uint16 = 122
	ArrayInsert uint16 = 123
	ArrayDelete uint16 = 124
	ArraySync   uint16 = 125

	// lb: load-balancing steps.
	LBSyncReady uint16 = 140
	LBCollect   uint16 = 141
	LBReport    uint16 = 142
	LBOrders    uint16 = 143
	LBDone      uint16 = 144
	LBRequest   uint16 = 145
	LBNotify    uint16 = 146
	LBDistStat  uint16 = 147
	LBDistPeer  uint16 = 148
	LBDistRound uint16 = 149
	LBDistAck   uint16 = 150
)

// Kind describes one kind of message.
type Kind struct {
	Num   uint16
	Owner string // the package that registers its decoder
	Name  string // what the message is, as errors name it
}

// Table lists every kind, in number order.
var Table = []Kind{
	{WaveDown, "actor", "detection wave"},
	{WaveUp, "actor", "detection wave reply"},
	{QDReq, "actor", "quiescence request"},
	{QDFire, "actor", "quiescence reached"},
	{CDBegin, "actor", "completion detection start"},
	{CDInit, "actor", "completion detection init"},
	{CDInitAck, "actor", "completion detection init ack"},
	{CDPoke, "actor", "completion detection poke"},
	{CDFire, "actor", "completion detection callback"},
	{QDPoke, "actor", "quiescence poke"},

	{Envelope, "chare", "chare envelope"},
	{Create, "chare", "collection creation"},
	{Announce, "chare", "collection announcement"},
	{Future, "chare", "future value"},
	{Reduction, "chare", "reduction"},
	{CkptStart, "chare", "checkpoint start"},
	{CkptCollect, "chare", "checkpoint collection"},
	{CkptPart, "chare", "checkpoint part"},
	{Restore, "chare", "restart objects"},
	{RestoreFence, "chare", "restart fence"},
	{RestoreAck, "chare", "restart acknowledgement"},

	{ArrayLoc, "array", "array location update"},
	{ArrayMove, "array", "array migration request"},
	{ArrayArrive, "array", "array element migration"},
	{ArrayInsert, "array", "array insertion"},
	{ArrayDelete, "array", "array deletion"},
	{ArraySync, "array", "array AtSync"},

	{LBSyncReady, "lb", "lb AtSync ready"},
	{LBCollect, "lb", "lb collect"},
	{LBReport, "lb", "lb PE report"},
	{LBOrders, "lb", "lb orders"},
	{LBDone, "lb", "lb step done"},
	{LBRequest, "lb", "lb step request"},
	{LBNotify, "lb", "lb report subscription"},
	{LBDistStat, "lb", "lb distributed reduction"},
	{LBDistPeer, "lb", "lb distributed gossip"},
	{LBDistRound, "lb", "lb distributed round"},
	{LBDistAck, "lb", "lb distributed round end"},
}

// controlBit is the bit of an item's kind that marks a control message.
const controlBit = 0x8000

// byNum is Table indexed by number.
var byNum = func() map[uint16]Kind {
	m, err := index(Table)
	if err != nil {
		panic(err)
	}
	return m
}()

// index checks a table (numbers in range, no number or name twice) and
// indexes it by number.
func index(t []Kind) (map[uint16]Kind, error) {
	m := make(map[uint16]Kind, len(t))
	names := make(map[string]uint16, len(t))
	for _, k := range t {
		if k.Num == 0 || k.Num >= controlBit {
			return nil, fmt.Errorf("wirekind: %s (%s) has number %d, outside 1..%d", k.Name, k.Owner, k.Num, controlBit-1)
		}
		if k.Name == "" || k.Owner == "" {
			return nil, fmt.Errorf("wirekind: kind %d has no name or owner", k.Num)
		}
		if old, dup := m[k.Num]; dup {
			return nil, fmt.Errorf("wirekind: kind %d is both %s (%s) and %s (%s)", k.Num, old.Name, old.Owner, k.Name, k.Owner)
		}
		if n, dup := names[k.Name]; dup {
			return nil, fmt.Errorf("wirekind: %q names both kind %d and kind %d", k.Name, n, k.Num)
		}
		m[k.Num], names[k.Name] = k, k.Num
	}
	return m, nil
}

// Name is the name of kind n in the table, or "" for a kind not in it.
func Name(n uint16) string { return byNum[n].Name }

// Lookup returns kind n's entry in the table.
func Lookup(n uint16) (Kind, bool) {
	k, ok := byNum[n]
	return k, ok
}

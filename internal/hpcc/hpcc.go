// Package hpcc holds HPCC RandomAccess's random stream and the initial
// values of its table, which the randomaccess example and the Charm++
// counterpart under tests/charm share.
package hpcc

import (
	"fmt"
	"time"
)

// HPCC's random stream: ran_{k+1} = ran_k · x in GF(2)[x] modulo
// x^64 + x^2 + x + 1, that is a left shift that XORs in Poly when the top
// bit falls out. Its period is Period.
const (
	Poly   = 0x0000000000000007
	Period = 1317624576693539401
)

// Next returns the value after ran in the stream.
func Next(ran uint64) uint64 {
	if int64(ran) < 0 {
		return ran<<1 ^ Poly
	}
	return ran << 1
}

// Starts returns the n-th value of the stream (HPCC_starts), such that
// Next(Starts(n)) == Starts(n+1) and Starts(0) == 1, in O(log n) steps by
// repeated squaring: a PE jumps to the start of its share without
// generating what comes before it.
func Starts(n int64) uint64 {
	for n < 0 {
		n += Period
	}
	for n > Period {
		n -= Period
	}
	if n == 0 {
		return 1
	}
	// m2[i] = x^(2i): multiplying by m2 columns squares a value.
	var m2 [64]uint64
	temp := uint64(1)
	for i := range m2 {
		m2[i] = temp
		temp = Next(Next(temp))
	}
	i := 62
	for i >= 0 && (n>>i)&1 == 0 {
		i--
	}
	ran := uint64(2)
	for i > 0 {
		temp = 0
		for j := 0; j < 64; j++ {
			if (ran>>j)&1 != 0 {
				temp ^= m2[j]
			}
		}
		ran = temp
		i--
		if (n>>i)&1 != 0 {
			ran = Next(ran)
		}
	}
	return ran
}

// Share returns the first update and the number of updates of PE pe when
// total updates are split as evenly as possible between npes PEs, in PE
// order.
func Share(total int64, npes, pe int) (first, n int64) {
	p, k := int64(npes), int64(pe)
	q, r := total/p, total%p
	first = k*q + min(k, r)
	n = q
	if k < r {
		n++
	}
	return first, n
}

// Words returns the initial values of a part of the table that holds the
// n words first, first+stride, first+2·stride, ...: each word starts as
// its global index.
func Words(first, stride uint64, n int) []uint64 {
	w := make([]uint64, n)
	for s := range w {
		w[s] = first + uint64(s)*stride
	}
	return w
}

// Strided returns how many of the indices k, k+stride, k+2·stride, ...
// fall below size: the words of part k when size words are dealt out in
// turn to stride parts.
func Strided(size, stride, k int64) int {
	if k >= size {
		return 0
	}
	return int((size - k + stride - 1) / stride)
}

// Changed counts the words of a part made by Words(first, stride, ...)
// that no longer hold their initial value.
func Changed(words []uint64, first, stride uint64) int64 {
	var bad int64
	for s, w := range words {
		if w != first+uint64(s)*stride {
			bad++
		}
	}
	return bad
}

// TwoPasses runs pass twice: the update pass, then the verification pass
// that sends the same stream again and so undoes every update. It
// returns the time of the update pass, or the error of the first pass
// that fails, naming that pass.
func TwoPasses(pass func() error) (time.Duration, error) {
	var elapsed time.Duration
	for k, name := range [2]string{"update", "verification"} {
		began := time.Now()
		if err := pass(); err != nil {
			return elapsed, fmt.Errorf("%s pass: %w", name, err)
		}
		if k == 0 {
			elapsed = time.Since(began)
		}
	}
	return elapsed, nil
}

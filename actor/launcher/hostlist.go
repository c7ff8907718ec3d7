package launcher

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds what a host list may expand to, so that a typo such as
// node[1-1000000000] is an error and not an allocation of gigabytes.
const maxHosts = 1 << 20

// ParseHostList expands a host list in Slurm's syntax into host names, in
// order: a comma-separated list of names, each of which may hold one or
// more bracketed sets of numbers — single numbers and ranges lo-hi,
// separated by commas. A range keeps the width of its lower bound when
// that bound has leading zeros: "node[01-04,07]" is node01, node02,
// node03, node04, node07, and "r[1-2]n[1-2]" is r1n1, r1n2, r2n1, r2n2
// (the last bracket varies fastest).
func ParseHostList(list string) ([]string, error) {
	items, err := splitTop(list)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, item := range items {
		hs, err := expand(item, list)
		if err != nil {
			return nil, err
		}
		if len(hosts)+len(hs) > maxHosts {
			return nil, fmt.Errorf("host list %q names more than %d hosts", list, maxHosts)
		}
		hosts = append(hosts, hs...)
	}
	return hosts, nil
}

// splitTop splits a host list at the commas outside brackets.
func splitTop(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("host list %q is empty", list)
	}
	var items []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '[':
			if depth > 0 {
				return nil, fmt.Errorf("host list %q: a bracket opens inside another at offset %d", list, i)
			}
			depth++
		case ']':
			if depth == 0 {
				return nil, fmt.Errorf("host list %q: a bracket closes at offset %d that was never opened", list, i)
			}
			depth--
		case ',':
			if depth == 0 {
				items = append(items, list[start:i])
				start = i + 1
			}
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("host list %q: a bracket is never closed", list)
	}
	items = append(items, list[start:])
	for _, it := range items {
		if it == "" {
			return nil, fmt.Errorf("host list %q has an empty entry", list)
		}
		if strings.ContainsAny(it, " \t\n") {
			return nil, fmt.Errorf("host list %q: entry %q holds white space", list, it)
		}
	}
	return items, nil
}

// expand expands one entry of a host list (no commas outside brackets).
func expand(item, list string) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		return []string{item}, nil
	}
	end := strings.IndexByte(item, ']') // brackets are balanced and flat
	prefix, set, rest := item[:open], item[open+1:end], item[end+1:]
	nums, err := expandSet(set, item, list)
	if err != nil {
		return nil, err
	}
	tails, err := expand(rest, list)
	if err != nil {
		return nil, err
	}
	if len(nums)*len(tails) > maxHosts {
		return nil, fmt.Errorf("host list %q names more than %d hosts", list, maxHosts)
	}
	out := make([]string, 0, len(nums)*len(tails))
	for _, n := range nums {
		for _, t := range tails {
			out = append(out, prefix+n+t)
		}
	}
	return out, nil
}

// expandSet expands the inside of one bracket: "01-04,07".
func expandSet(set, item, list string) ([]string, error) {
	if set == "" {
		return nil, fmt.Errorf("host list %q: entry %q has empty brackets", list, item)
	}
	var out []string
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, errA := number(lo)
		b, errB := number(hi)
		for _, err := range []error{errA, errB} {
			var big *tooLarge
			if errors.As(err, &big) {
				return nil, fmt.Errorf("host list %q: in %q of entry %q, %s", list, part, item, big)
			}
		}
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("host list %q: %q in entry %q is not a number or a range of numbers (lo-hi)", list, part, item)
		}
		if b < a {
			return nil, fmt.Errorf("host list %q: range %q in entry %q runs backwards", list, part, item)
		}
		if b-a >= maxHosts || len(out)+b-a+1 > maxHosts {
			return nil, fmt.Errorf("host list %q names more than %d hosts", list, maxHosts)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		for n := a; n <= b; n++ {
			out = append(out, fmt.Sprintf("%0*d", width, n))
		}
	}
	return out, nil
}

// maxNumber bounds the numbers of a host list and of a count of tasks
// (ranges are bounded by maxHosts besides).
const maxNumber = 999_999_999

// tooLarge is number's error for digits that make a number above
// maxNumber.
type tooLarge struct{ s string }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("the number %s is too large (at most %d)", e.s, maxNumber)
}

// number parses a bracket's decimal number: digits only, no sign, at
// most maxNumber (leading zeros allowed).
func number(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if v := strings.TrimLeft(s, "0"); len(v) > 9 {
		if len(s) > 40 {
			s = s[:20] + fmt.Sprintf("… (%d digits)", len(s))
		}
		return 0, &tooLarge{s}
	}
	return strconv.Atoi(s)
}

// ParseTasksPerNode expands Slurm's count of tasks on each host of a step
// (SLURM_STEP_TASKS_PER_NODE): "2(x3),1" is 2, 2, 2, 1.
func ParseTasksPerNode(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("tasks per node %q is empty", s)
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		count, rep := part, "1"
		if i := strings.IndexByte(part, '('); i >= 0 {
			if !strings.HasPrefix(part[i:], "(x") || !strings.HasSuffix(part, ")") {
				return nil, fmt.Errorf("tasks per node %q: %q is not N or N(xR)", s, part)
			}
			count, rep = part[:i], part[i+2:len(part)-1]
		}
		c, err1 := number(count)
		r, err2 := number(rep)
		var big *tooLarge
		if errors.As(err1, &big) {
			return nil, fmt.Errorf("tasks per node %q: in %q, %s", s, part, big)
		}
		if errors.As(err2, &big) || err2 == nil && r > maxHosts {
			return nil, fmt.Errorf("tasks per node %q: the repeat count of %q is too large: it names more than %d hosts", s, part, maxHosts)
		}
		if err1 != nil || err2 != nil || c < 1 || r < 1 {
			return nil, fmt.Errorf("tasks per node %q: %q is not N or N(xR) with N, R ≥ 1", s, part)
		}
		if len(out)+r > maxHosts {
			return nil, fmt.Errorf("tasks per node %q names more than %d hosts", s, maxHosts)
		}
		for ; r > 0; r-- {
			out = append(out, c)
		}
	}
	return out, nil
}

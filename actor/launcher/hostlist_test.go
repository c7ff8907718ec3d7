package launcher

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHostList(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"node1", []string{"node1"}},
		{"a,b,c", []string{"a", "b", "c"}},
		{"node[1-3]", []string{"node1", "node2", "node3"}},
		{"node[01-04,07]", []string{"node01", "node02", "node03", "node04", "node07"}},
		{"node[08-11]", []string{"node08", "node09", "node10", "node11"}},
		{"n[098-101]", []string{"n098", "n099", "n100", "n101"}},
		{"node[9-11]", []string{"node9", "node10", "node11"}},
		{"node[0]", []string{"node0"}},
		{"node[00]", []string{"node00"}},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"r[1-2]-n[07,9]x", []string{"r1-n07x", "r1-n9x", "r2-n07x", "r2-n9x"}},
		{"login,gpu[1-2],cpu[003,5]", []string{"login", "gpu1", "gpu2", "cpu003", "cpu5"}},
		{"[1-2]", []string{"1", "2"}},
		{"10.0.0.[1-2]", []string{"10.0.0.1", "10.0.0.2"}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseHostList(c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseHostListBadInput(t *testing.T) {
	cases := []struct{ in, says string }{
		{"", "is empty"},
		{"  ", "is empty"},
		{"a,,b", "empty entry"},
		{"a,", "empty entry"},
		{",a", "empty entry"},
		{"node[1-3", "never closed"},
		{"node1-3]", "never opened"},
		{"node[1-[2]]", "inside another"},
		{"node[]", "empty brackets"},
		{"node[3-1]", `range "3-1" in entry "node[3-1]" runs backwards`},
		{"node[a-b]", `"a-b" in entry "node[a-b]" is not a number`},
		{"node[1,]", `"" in entry "node[1,]" is not a number`},
		{"node[-1]", `"-1" in entry "node[-1]" is not a number`},
		{"node[1-2-3]", `"1-2-3" in entry "node[1-2-3]" is not a number`},
		{"node[+1]", `"+1"`},
		{"node[0-999999999]", "more than"},
		{"node[1-99999999999]", `in "1-99999999999" of entry "node[1-99999999999]", the number 99999999999 is too large (at most 999999999)`},
		{"node[99999999999]", `the number 99999999999 is too large (at most 999999999)`},
		{"node[1-" + strings.Repeat("9", 1000) + "]", `the number 99999999999999999999… (1000 digits) is too large`},
		{"a[0-999]b[0-9999]", "more than"},
		{"node 1", "white space"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			_, err := ParseHostList(c.in)
			require.Error(t, err)
			require.Contains(t, err.Error(), fmt.Sprintf("host list %q", c.in), "the error names the list")
			require.Contains(t, err.Error(), c.says)
		})
	}
}

func TestParseTasksPerNode(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		says string
	}{
		{in: "2", want: []int{2}},
		{in: "2(x3),1", want: []int{2, 2, 2, 1}},
		{in: "1,4(x2)", want: []int{1, 4, 4}},
		{in: "", says: "empty"},
		{in: "2(x0)", says: `"2(x0)" is not N or N(xR)`},
		{in: "2(3)", says: `"2(3)" is not N or N(xR)`},
		{in: "0", says: `"0"`},
		{in: "x", says: `"x"`},
		{in: "1,,2", says: `""`},
		{in: "0001(x2)", want: []int{1, 1}},
		{in: "1(x1000000000)", says: `tasks per node "1(x1000000000)": the repeat count of "1(x1000000000)" is too large: it names more than 1048576 hosts`},
		{in: "1(x99999999999)", says: `the repeat count of "1(x99999999999)" is too large`},
		{in: "1(x2000000)", says: `the repeat count of "1(x2000000)" is too large`},
		{in: "99999999999", says: `tasks per node "99999999999": in "99999999999", the number 99999999999 is too large (at most 999999999)`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseTasksPerNode(c.in)
			if c.says != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.says)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

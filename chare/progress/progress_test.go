package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLine(t *testing.T) {
	cases := []struct {
		name        string
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{"nothing done yet", 0, 100, 0, "run  0/100 iters  0%"},
		{"a third", 34, 100, 2 * time.Second, "run  34/100 iters  34%  17.0/s  ETA 3.9s"},
		{"thousands a second", 5000, 20000, time.Second, "run  5000/20000 iters  25%  5.0k/s  ETA 3.0s"},
		{"millions a second, minutes left", 2_000_000, 300_000_000, time.Second, "run  2000000/300000000 iters  0%  2.00M/s  ETA 2m29s"},
		{"hours left", 1, 10000, time.Second, "run  1/10000 iters  0%  1.0/s  ETA 2h46m"},
		{"finished", 100, 100, 4 * time.Second, "run  100/100 iters  100%  25.0/s  in 4.0s"},
		{"no total", 42, 0, 2 * time.Second, "run  42 iters  21.0/s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Line("run", "iters", c.done, c.total, c.elapsed))
		})
	}
}

func TestBarRedrawsAtMostEveryPeriodAndEndsWithANewline(t *testing.T) {
	var out bytes.Buffer
	b := NewWriter(&out, "job", 10, "steps")
	clock := b.start
	b.now = func() time.Time { return clock }
	for i := 1; i <= 10; i++ {
		clock = clock.Add(100 * time.Millisecond)
		b.Set(i)
	}
	b.Done()
	b.Done() // once only
	s := out.String()
	require.Equal(t, 6, strings.Count(s, "\r"), "five redraws at 200 ms and the final one: %q", s)
	require.True(t, strings.HasSuffix(s, "job  10/10 steps  100%  10.0/s  in 1.0s\n"), "%q", s)
}

func TestClearErasesTheLineAndTheNextSetRedraws(t *testing.T) {
	var out bytes.Buffer
	b := NewWriter(&out, "bench", 4, "benchmarks")
	clock := b.start
	b.now = func() time.Time { return clock }
	clock = clock.Add(time.Second)
	b.Set(1)
	drawn := out.Len()
	b.Clear()
	erased := out.String()[drawn:]
	require.Equal(t, "\r"+strings.Repeat(" ", drawn-1)+"\r", erased, "blanks exactly the drawn line")
	b.Clear() // nothing drawn since: nothing written
	require.Equal(t, drawn+len(erased), out.Len())
	b.Set(2) // at once, though the redraw period has not passed
	require.True(t, strings.HasSuffix(out.String(), "\rbench  2/4 benchmarks  50%  2.0/s  ETA 1.0s"), "%q", out.String())
}

func TestBarBlanksOutALongerPreviousLine(t *testing.T) {
	var out bytes.Buffer
	b := NewWriter(&out, "j", 0, "x")
	b.every = 0
	b.Set(123456)
	b.Set(1)
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	require.Equal(t, len(strings.SplitN(out.String(), "\r", 3)[1]), len(last)-1, "the shorter line is padded to the longer one's width")
}

func TestOffWhenNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, IsTerminal(f), "a regular file")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, IsTerminal(w), "a pipe")
	require.False(t, IsTerminal(nil))
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		require.True(t, IsTerminal(tty), "/dev/tty")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		require.Equal(t, runtime.GOOS != "linux", IsTerminal(null), "/dev/null is a character device but no terminal")
	}
	var off *Bar = NewWriter(nil, "x", 10, "y")
	require.False(t, off.On())
	off.Set(3)
	off.Add(1)
	off.Done()
	var nilBar *Bar
	require.False(t, nilBar.On())
}

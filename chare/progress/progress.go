// Package progress shows how far a long run is on a terminal: iterations
// done out of the total, the rate, and the estimated time left, redrawn on
// one line of standard error at most a few times a second:
//
//	jacobi2d  340/1000 iterations  34%  812.3/s  ETA 0.8s
//
// It is off when standard error is not a terminal (a pipe, a file, a CI
// log), so that logs get no carriage returns; the program's output on
// standard output is never touched. Use it from the code that counts the
// iterations (the main chare, or a benchmark's driver):
//
//	bar := progress.New("jacobi2d", iters, "iterations")
//	for i := range iters { ...; bar.Set(i + 1) }
//	bar.Done()
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar is the progress of one run. Its methods may be called from any
// goroutine; a Bar that is off does nothing.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer // nil: off
	name    string
	unit    string
	total   int
	done    int
	start   time.Time
	last    time.Time // of the last redraw
	every   time.Duration
	width   int // of the last line drawn, to blank it out
	now     func() time.Time
	stopped bool
}

// New returns a bar on standard error, or one that is off if standard
// error is not a terminal. total may be 0 when it is not known (no
// percentage or ETA then).
func New(name string, total int, unit string) *Bar {
	var w io.Writer
	if IsTerminal(os.Stderr) {
		w = os.Stderr
	}
	return NewWriter(w, name, total, unit)
}

// NewWriter returns a bar that draws on w (nil: off).
func NewWriter(w io.Writer, name string, total int, unit string) *Bar {
	return &Bar{w: w, name: name, total: total, unit: unit, start: time.Now(), every: 200 * time.Millisecond, now: time.Now}
}

// IsTerminal reports whether f is a terminal: a character device (not a
// file or a pipe) that, on Linux, the terminal driver answers for (not
// /dev/null).
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}

// On reports whether the bar draws anything.
func (b *Bar) On() bool { return b != nil && b.w != nil }

// Set records that n iterations are done, and redraws if the last redraw
// is old enough.
func (b *Bar) Set(n int) {
	if !b.On() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = n
	if now := b.now(); now.Sub(b.last) >= b.every && !b.stopped {
		b.last = now
		b.draw(now)
	}
}

// Add records k more iterations done.
func (b *Bar) Add(k int) {
	if !b.On() {
		return
	}
	b.mu.Lock()
	n := b.done + k
	b.mu.Unlock()
	b.Set(n)
}

// Clear erases the bar's line, so that the program can print a line of
// its own; the next Set or Add draws the bar again at once.
func (b *Bar) Clear() {
	if !b.On() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || b.width == 0 {
		return
	}
	fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
	b.width, b.last = 0, time.Time{}
}

// Done draws the final line and ends it with a newline.
func (b *Bar) Done() {
	if !b.On() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	b.draw(b.now())
	fmt.Fprintln(b.w)
}

func (b *Bar) draw(now time.Time) {
	line := Line(b.name, b.unit, b.done, b.total, now.Sub(b.start))
	pad := ""
	if n := b.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	b.width = len(line)
	fmt.Fprintf(b.w, "\r%s%s", line, pad)
}

// Line formats one progress line: done out of total units, the share
// done, the rate, and the time left at that rate. Without a total (0) it
// gives the count and the rate only.
func Line(name, unit string, done, total int, elapsed time.Duration) string {
	var sb strings.Builder
	sb.WriteString(name)
	if total > 0 {
		fmt.Fprintf(&sb, "  %d/%d %s  %d%%", done, total, unit, done*100/total)
	} else {
		fmt.Fprintf(&sb, "  %d %s", done, unit)
	}
	if elapsed <= 0 || done <= 0 {
		return sb.String()
	}
	rate := float64(done) / elapsed.Seconds()
	fmt.Fprintf(&sb, "  %s/s", formatRate(rate))
	if total > 0 && done < total {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&sb, "  ETA %s", formatETA(left))
	} else if total > 0 {
		fmt.Fprintf(&sb, "  in %s", formatETA(elapsed))
	}
	return sb.String()
}

// formatRate prints a rate with a k or M suffix beyond a thousand.
func formatRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.1f", r)
}

// formatETA prints a duration to a tenth of a second below a minute, in
// whole seconds up to an hour, and in hours and minutes beyond.
func formatETA(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

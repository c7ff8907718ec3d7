package main

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// ---- trace/manytomany ----

func init() {
	registerPaired("trace/manytomany", benchTraceManyToMany)
}

// benchTraceManyToMany runs runtime/manytomany's exchange in a job traced
// with -trace against the same exchange in a job that is not, in
// interleaved pairs (one job each: tracing is set for a whole job). Each
// job warms up with a quarter of the messages first. A .../file line gives
// the size of the trace file of one measured run per message.
func benchTraceManyToMany(cfg config) ([]figure, error) {
	const name = "trace/manytomany"
	p := cfg.pes
	k := max(1, int(800_000*cfg.scale/float64(p*(p-1))))
	total := float64(p * k * (p - 1))
	dir, err := os.MkdirTemp("", "charmgo-trace-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rate := figure{name: name, unit: "msgs/s"}
	file := figure{name: name + "/file", unit: "bytes/msg"}
	for i := 0; i < pairsOf(cfg); i++ {
		path := filepath.Join(dir, "m2m.json")
		r, err := m2mJob(p, k, total, path)
		if err != nil {
			return nil, err
		}
		rate.value = append(rate.value, r)
		if st, err := os.Stat(path); err == nil && i == 0 {
			// The file holds the warm-up's quarter too.
			file.value, file.baseline = []float64{float64(st.Size()) / (total * 1.25)}, []float64{1}
		}
		if r, err = m2mJob(p, k, total, ""); err != nil {
			return nil, err
		}
		rate.baseline = append(rate.baseline, r)
	}
	return []figure{rate, file}, nil
}

// m2mJob runs one job of p PEs, traced to path if set, and returns the
// rate of its measured exchange of k messages per ordered pair of PEs.
func m2mJob(p, k int, total float64, path string) (float64, error) {
	var rate float64
	var berr error
	cfg := chare.Config{PEs: p, Timeout: 5 * time.Minute, Trace: path}
	_, err := chare.Run(cfg, func(m *benchMain, _ []string) {
		defer m.Exit(0)
		g, err := group.New[m2mBranch](m)
		if err != nil {
			berr = err
			return
		}
		for _, kk := range []int{max(1, k/4), k} {
			goruntime.GC()
			f := chare.NewFuture[any](m)
			t0 := time.Now()
			if berr = chare.Send(m, g, (*m2mBranch).Start, m2mStart{K: kk, Done: f.Callback()}); berr != nil {
				return
			}
			if _, berr = f.Get(m); berr != nil {
				return
			}
			rate = total / time.Since(t0).Seconds()
		}
	})
	if err != nil {
		return 0, err
	}
	return rate, berr
}

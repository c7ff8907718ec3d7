package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/schedule"
)

// comlib/schedule/<name>/<bytes>B/{1proc,2proc}: one element per PE, on 8 and then 16 PEs
// (lines …/8pe and …/16pe), exchange blocks of <bytes> bytes all-to-all through EachToMany
// running the complete-exchange schedule <name> as its router. The value is the measured time
// per exchange; the baseline is the cost model's lower bound T_ata = k(p−1)g + T_w for that
// exchange (k = 1 packet per block), with the model calibrated by comlib.Calibrate in the same
// job, interleaved with the exchanges (a calibration, then a timed run, five times or more):
// the ratio says how far the schedule runs from the optimum the measured model allows.
// A second line, …/model, gives the model's prediction for the schedule against the same
// bound, so that the measured ratio can be read beside the predicted one.
//
// What the bound does not include: the bracket's own work (BeginIteration/EndIteration, the
// combined stage packets of the runtime), and it assumes every participant sends and receives
// at full speed at once, which 8 or 16 PEs on 2 cores cannot do.

var (
	schedSizes = []int{16, 1 << 10, 64 << 10}
	schedPEs   = []int{8, 16}
)

func init() {
	for _, name := range schedule.Names() {
		for _, size := range schedSizes {
			for _, nodes := range []int{1, 2} {
				bench := fmt.Sprintf("comlib/schedule/%s/%dB/%dproc", name, size, nodes)
				registerPaired(bench, func(cfg config) ([]figure, error) { return benchSchedule(cfg, bench, name, size, nodes) })
			}
		}
	}
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

func benchSchedule(cfg config, bench, name string, size, nodes int) ([]figure, error) {
	var figs []figure
	for _, pes := range schedPEs {
		meas := figure{name: fmt.Sprintf("%s/%dpe", bench, pes), unit: "us"}
		model := figure{name: meas.name + "/model", unit: "us"}
		s, err := schedule.New(name, pes, 1, schedule.Options{})
		if err != nil {
			return nil, err
		}
		iters := clIters(cfg, size, nodes)
		err = runNodes(pes, nodes, bench, func(m *benchMain) error {
			x, err := newExchange(m, pes, size)
			if err != nil {
				return err
			}
			slot, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: name, Sources: x.arr}))
			if err != nil {
				return err
			}
			if _, err := x.run(slot, 2); err != nil { // the first iteration learns the sources
				return err
			}
			sizes := slices.Clone(comlib.DefaultCalibrationSizes)
			if !slices.Contains(sizes, size) {
				sizes = append(sizes, size)
			}
			for i := 0; i < pairsOf(cfg); i++ {
				cal, err := comlib.Calibrate(m, comlib.CalibrateOptions{Sizes: sizes, Reps: 3})
				if err != nil {
					return err
				}
				p := cal.Model.At(size)
				lb := us(p.LowerBound(pes, 1))
				if lb <= 0 {
					return fmt.Errorf("%s: the calibrated model's T_ata for %d PEs is %v µs: %+v", bench, pes, lb, p)
				}
				t, err := x.run(slot, iters)
				if err != nil {
					return err
				}
				meas.value, meas.baseline = append(meas.value, t), append(meas.baseline, lb)
				model.value, model.baseline = append(model.value, us(p.Predict(s))), append(model.baseline, lb)
			}
			if rec := x.insts[slot].Recovered(); !slices.Equal(rec, []int{0}) {
				return fmt.Errorf("%s: iterations recovered %v, want only the first [0]", bench, rec)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		figs = append(figs, meas, model)
	}
	return figs, nil
}

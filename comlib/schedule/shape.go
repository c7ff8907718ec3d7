package schedule

// Shape is what Table 5.1 of the seed tabulates for a schedule, found by inspecting it.
type Shape struct {
	// FanOut is the most distinct destinations one participant sends to within one round (ω).
	FanOut int
	// Rounds counts the rounds.
	Rounds int
	// Stalls counts the pipeline drains: a participant starts a round only after it has sent and
	// received everything of the previous one, so both pipelines empty once between rounds.
	Stalls int
	// Steps counts the packet steps over all rounds.
	Steps int
	// Idle[i] counts the rounds in which participant i neither sends nor receives.
	Idle []int
}

// Inspect derives s's shape from its transfers.
func Inspect(s *Schedule) Shape {
	sh := Shape{Idle: make([]int, s.P)}
	busy := make([]int, s.P) // last round (+1) in which i sent or received
	for r, round := range s.Rounds {
		if len(round) == 0 {
			continue
		}
		sh.Rounds++
		sh.Steps += len(round)
		dests := make(map[int]map[int]bool)
		for _, st := range round {
			for _, t := range st {
				if t.From >= 0 && t.From < s.P {
					busy[t.From] = r + 1
				}
				if t.To >= 0 && t.To < s.P {
					busy[t.To] = r + 1
				}
				d := dests[t.From]
				if d == nil {
					d = make(map[int]bool)
					dests[t.From] = d
				}
				d[t.To] = true
				sh.FanOut = max(sh.FanOut, len(d))
			}
		}
		for i := range busy {
			if busy[i] != r+1 {
				sh.Idle[i]++
			}
		}
	}
	if sh.Rounds > 0 {
		sh.Stalls = sh.Rounds - 1
	}
	return sh
}

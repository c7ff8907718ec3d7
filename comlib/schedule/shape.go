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
	p := s.P
	busy := make([]int, p)   // last round (+1) in which i sent or received
	sent := make([]int, p*p) // last round (+1) in which i sent to j, at i*p+j
	fan := make([]int, p)    // distinct destinations of i in the current round
	for r, round := range s.Rounds {
		if len(round) == 0 {
			continue
		}
		sh.Rounds++
		sh.Steps += len(round)
		clear(fan)
		for _, st := range round {
			for _, t := range st {
				if t.From < 0 || t.From >= p || t.To < 0 || t.To >= p {
					continue // Verify reports these
				}
				busy[t.From], busy[t.To] = r+1, r+1
				if sent[t.From*p+t.To] != r+1 {
					sent[t.From*p+t.To] = r + 1
					fan[t.From]++
					sh.FanOut = max(sh.FanOut, fan[t.From])
				}
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

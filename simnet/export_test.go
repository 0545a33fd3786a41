package simnet

// PlantStats makes every run hand its measurements to f before they are
// checked against the invariants (invariants.go); nil restores the checks.
func PlantStats(f func(cfg *Config, st *Stats)) {
	if f == nil {
		plantHook.Store(nil)
		return
	}
	plantHook.Store(&f)
}

// PlantAlternate counts one more race that sent its alternate, and its
// leg, in st: every invariant but "disabled" still holds.
func PlantAlternate(st *Stats) { st.altRaces++; st.legs++ }

// PlantLeg counts one more leg sent in st.
func PlantLeg(st *Stats) { st.legs++ }

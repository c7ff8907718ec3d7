package comlib

// SelectionParses returns the number of selection trees parsed in this
// process so far.
func SelectionParses() int64 { return selectionParses.Load() }

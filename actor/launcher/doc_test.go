package launcher

import (
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every environment variable that Detect reads, or names in an error, is
// listed in the package documentation.
func TestDocListsEveryVariable(t *testing.T) {
	src, err := os.ReadFile("launcher.go")
	require.NoError(t, err)
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	vars := map[string]bool{}
	for _, m := range regexp.MustCompile(`"((?:OMPI|PMIX?|MPI|SLURMD?|CHARMGO)_[A-Z_]+)"`).FindAllSubmatch(src, -1) {
		vars[string(m[1])] = true
	}
	require.Contains(t, vars, "SLURM_NTASKS", "the pattern finds the variables")
	var missing []string
	for v := range vars {
		if !regexp.MustCompile(`\b` + v + `\b`).Match(doc) {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "variables read in launcher.go but not listed in doc.go")
}

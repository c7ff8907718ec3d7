package tunedebug

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Report names become plain file names inside the -tunedebug directory.
func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"comlib1-pe0-cap": "comlib1-pe0-cap",
		"tram/step 1":     "tram_step_1",
		"../../etc/x":     "_.._etc_x",
		"..":              "_",
		"":                "_",
		"π.v2":            "_.v2",
	} {
		require.Equal(t, want, safeName(in), "name %q", in)
	}
}

package comlib

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportSumsEveryField: the job's figures are the sum of the
// processes' for every field of StatsSnapshot, a field added later too.
func TestReportSumsEveryField(t *testing.T) {
	per := make([]StatsSnapshot, 3)
	for i := range per {
		v := reflect.ValueOf(&per[i]).Elem()
		for f := range v.NumField() {
			v.Field(f).SetInt(int64(i + 1))
		}
	}
	job := reflect.ValueOf(newReport(per).Job)
	for f := range job.NumField() {
		require.Equal(t, int64(6), job.Field(f).Int(), "Job.%s", job.Type().Field(f).Name)
	}
}

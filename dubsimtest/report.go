package dubsimtest

import (
	"encoding/json"

	"github.com/dubsim/dubsim/sim/journal"
)

// Text renders the report for a person: a summary, then each finding
// with its examples.
func (r Report) Text() string {
	// The report's wire form is the journal's: the simulator's renderer
	// reads it back, so the text is the same as the server's.
	b, err := json.Marshal(r)
	if err != nil {
		return err.Error()
	}
	var jr journal.Report
	if err := json.Unmarshal(b, &jr); err != nil {
		return err.Error()
	}
	return jr.Text()
}

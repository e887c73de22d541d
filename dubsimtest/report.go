package dubsimtest

import (
	"encoding/json"

	"github.com/dubsim/dubsim/sim/journal"
)

// Text renders the report for a person: a summary, then each finding
// with its examples.
func (r Report) Text() string {
	// The server's renderer reads the wire form back: the same text.
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

package server

import (
	"net/http"
	"time"
)

// Values of Config.DateHeader.
const (
	DateSimulated = "simulated"
	DateReal      = "real"
)

// simulatedDate sets every answer's Date header to the simulated time the
// request arrived, the time every body's timestamps are in (fidelity K10):
// a client that compares a body's time (estimated_completion_date,
// expiresAt) with Date, or corrects its clock skew from Date, sees one
// clock. With DateReal, net/http writes real time as usual.
func simulatedDate(next http.Handler, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", now().UTC().Format(http.TimeFormat))
		next.ServeHTTP(w, r)
	})
}

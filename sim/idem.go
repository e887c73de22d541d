package sim

import "time"

// IdemWrite is the idempotency record a creation stores in its own
// transaction (nil: no Idempotency-Key), so that a creation that commits is
// never without its record, even if the process dies before answering.
type IdemWrite[T any] struct {
	Scope, Key, Fingerprint string
	// Render encodes the answer exactly as the handler will send it.
	Render func(result T) (status int, contentType string, body []byte, err error)
}

// Record renders result into the record to store, stamped at now.
func (w *IdemWrite[T]) Record(result T, now time.Time) (IdemRecord, error) {
	status, ct, body, err := w.Render(result)
	return IdemRecord{Fingerprint: w.Fingerprint, Status: status, ContentType: ct, Body: body, CreatedAt: now}, err
}

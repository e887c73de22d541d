package httpx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// JSON has one number type: 100, 100.0 and 1e2 are the same value, and a
// client in JavaScript or Python may send an integer in any of these forms,
// which Go's decoder refuses in an integer field but the first.

// decimal is a JSON number literal taken apart exactly: the value is
// (-1 if neg) * digits * 10^exp, digits without leading or trailing zeros
// ("" for zero).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExpDigits bounds the exponent parseDecimal takes: beyond it
// (1e1000000000) the literal is left as written.
const maxExpDigits = 9

// parseDecimal parses a JSON number literal.
func parseDecimal(lit []byte) (d decimal, ok bool) {
	s := string(lit)
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return d, false
	}
	var exp int64
	if hasExp {
		e := strings.TrimPrefix(strings.TrimPrefix(expPart, "+"), "-")
		if e == "" || !allDigits(e) {
			return d, false
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > maxExpDigits {
			return d, false
		}
		exp, _ = strconv.ParseInt("0"+e, 10, 64)
		if strings.HasPrefix(expPart, "-") {
			exp = -exp
		}
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	d.digits = trimmed
	if d.digits == "" {
		d.neg, d.exp = false, 0 // -0, 0.0, 0e5: zero
	} else {
		d.exp = exp
	}
	return d, true
}

func allDigits(s string) bool { return strings.Trim(s, "0123456789") == "" }

// int64Literal is the plain integer literal of d, if d is an int64.
func (d decimal) int64Literal() (string, bool) {
	if d.digits == "" {
		return "0", true
	}
	if d.exp < 0 || int64(len(d.digits))+d.exp > 19 {
		return "", false
	}
	s := d.digits + strings.Repeat("0", int(d.exp))
	if d.neg {
		s = "-" + s
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return "", false
	}
	return s, true
}

// canonical is one spelling per value: "0", or [-]digits"e"exp.
func (d decimal) canonical() string {
	if d.digits == "" {
		return "0"
	}
	s := d.digits + "e" + strconv.FormatInt(d.exp, 10)
	if d.neg {
		s = "-" + s
	}
	return s
}

// IntegralNumbers respells the int64 values of a valid JSON text written
// with a fraction or an exponent (100.0, 1e2, 1.5e1, -0.0) as plain
// integers (100, 15, 0), for Go's decoder to accept them in integer fields.
// Fractions and integers out of range are left for the decoder to refuse as
// written; invalid JSON is returned as it is, so a syntax error keeps its
// offset.
func IntegralNumbers(body []byte) []byte {
	if !bytes.ContainsAny(body, ".eE") {
		return body
	}
	var out []byte
	last := 0
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			i = skipString(body, i)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(body) && isNumberByte(body[j]) {
				j++
			}
			lit := body[i:j]
			if bytes.ContainsAny(lit, ".eE") {
				if d, ok := parseDecimal(lit); ok {
					if s, ok := d.int64Literal(); ok {
						if out == nil {
							if !json.Valid(body) {
								return body
							}
							out = make([]byte, 0, len(body))
						}
						out = append(out, body[last:i]...)
						out = append(out, s...)
						last = j
					}
				}
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

func isNumberByte(c byte) bool { return strings.IndexByte("0123456789.eE+-", c) >= 0 }

// skipString returns the index after the string starting at body[i] ('"').
func skipString(body []byte, i int) int {
	for i++; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// byteSize is a flag of a number of bytes: plain (1048576) or with a unit,
// binary (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB), any case, such
// as 512MiB or 20GB. It prints with the largest binary unit that divides
// it exactly, so --help shows 1GiB rather than 1073741824.
type byteSize int64

// byteUnits are in the order String prefers them; "b" comes last, since
// every other suffix ends with it.
var byteUnits = []struct {
	suffix string
	factor int64
}{{"TiB", 1 << 40}, {"TB", 1e12}, {"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"kB", 1e3}, {"B", 1}}

// errByteSize is the reason of a refused byte count; the flag package (or
// the environment check) names the flag and the value.
var errByteSize = errors.New("want a non-negative number of bytes, such as 1048576, 512MiB or 20GB")

func (b *byteSize) Set(s string) error {
	t := strings.ToLower(strings.TrimSpace(s))
	factor := int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(t, strings.ToLower(u.suffix)); ok {
			t, factor = strings.TrimSpace(n), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || (n > 0 && factor > (1<<63-1)/n) {
		return errByteSize
	}
	*b = byteSize(n * factor)
	return nil
}

func (b *byteSize) String() string {
	n := int64(*b)
	best := strconv.FormatInt(n, 10)
	if n == 0 {
		return best
	}
	// The exact form with the fewest digits: 1GiB, 20GB, 1KiB.
	for _, u := range byteUnits {
		if n%u.factor == 0 {
			if s := strconv.FormatInt(n/u.factor, 10) + u.suffix; len(s) < len(best) {
				best = s
			}
		}
	}
	return best
}

func bytesVar(fs *flag.FlagSet, p *int64, name string, value int64, usage string) {
	*p = value
	fs.Var((*byteSize)(p), name, usage)
}

// newFlagSet is the flag set of a command whose -help prints header, then
// the flags.
func newFlagSet(name, header string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(stderr, header)
		fs.PrintDefaults()
	}
	return fs
}

// parseNoArgs is parseFlags for a command that takes flags only.
func parseNoArgs(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	if err := parseFlags(fs, args, stderr); err != nil || fs.NArg() == 0 {
		return err
	}
	return fmt.Errorf("%s: unexpected argument %q", strings.TrimPrefix(fs.Name(), "dubsim "), fs.Arg(0))
}

// parseFlags parses args into fs and reports a mistake once: the flag
// package would print its error and the usage, and main prints it again.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	usage := fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		// The flag package says only "parse error" of a bad number or
		// duration: say what is wanted.
		if m := badValue.FindStringSubmatch(err.Error()); m != nil {
			if f := fs.Lookup(m[1]); f != nil {
				return fmt.Errorf("%s%s (%s -help lists the flags)", strings.TrimSuffix(err.Error(), "parse error"), valueHint(f), fs.Name())
			}
		}
		return fmt.Errorf("%w (%s -help lists the flags)", err, fs.Name())
	}
	return nil
}

var badValue = regexp.MustCompile(`for (?:flag )?-(\S+): parse error$`)

// setFromEnv sets f from its variable's value v, wording a refusal as the
// flag package words a flag's.
func setFromEnv(f *flag.Flag, v string) error {
	err := f.Value.Set(v)
	if err == nil {
		return nil
	}
	reason := err.Error()
	if reason == "parse error" {
		reason = valueHint(f)
	}
	return fmt.Errorf("invalid value %q for %s: %s", v, envName(f.Name), reason)
}

// valueHint says what a typed flag of the standard library takes.
func valueHint(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "parse error"
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration such as 90s, 2m or 1h30m"
	case float64:
		return "want a number such as 60 or 0.5"
	case int, int64:
		return "want an integer"
	case uint, uint64:
		return "want a non-negative integer"
	case bool:
		return "want true or false"
	}
	return "parse error"
}

func envHelp(fs *flag.FlagSet, skip ...string) {
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(skip, f.Name) {
			f.Usage += " [$" + envName(f.Name) + "]"
		}
	})
}

// otherVariables are DUBSIM_* variables that are not server flags but are
// read by dubsim's subcommands, its examples and its test suites: they are
// not typos.
var otherVariables = []string{
	"DUBSIM_URL", "DUBSIM_API_KEY", "DUBSIM_IMAGE", "DUBSIM_REQUIRE_TOOLS", "DUBSIM_LONG", "DUBSIM_INSECURE", "DUBSIM_MANAGER_EMAIL",
	// Test suites (test/crash, test/browser, sim/server) and bench/.
	"DUBSIM_CRASH_SEED", "DUBSIM_CRASH_ITERATIONS", "DUBSIM_CRASH_SKIP_UNACKED_REPLAY", "DUBSIM_CRASH_STUDIO_SKIP_CLOCK",
	"DUBSIM_CRASH_STUDIO_ITERATIONS", "DUBSIM_CONCURRENCY_SEED", "DUBSIM_BLACKBOX_SEED", "DUBSIM_BLACKBOX_REQUESTS",
	"DUBSIM_CHROMIUM", "DUBSIM_SCREENSHOTS", "DUBSIM_VERSION", "DUBSIM_NOISY",
}

// unknownVariables lists the DUBSIM_* variables of environ (NAME=VALUE
// entries) that name no setting, each with the closest known name when one
// is near (a typo), else "".
func unknownVariables(environ []string, known []string) [][2]string {
	var out [][2]string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "DUBSIM_") || slices.Contains(known, name) {
			continue
		}
		// A suggestion only within a few edits of the part after DUBSIM_:
		// 2, or a quarter of its length (DUBSIM_FOO suggests nothing).
		suffix := strings.TrimPrefix(name, "DUBSIM_")
		best, bestD := "", max(2, len(suffix)/4)+1
		for _, k := range known {
			if d := editDistance(suffix, strings.TrimPrefix(k, "DUBSIM_")); d < bestD {
				best, bestD = k, d
			}
		}
		out = append(out, [2]string{name, best})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func knownVariables(fs *flag.FlagSet) []string {
	known := slices.Clone(otherVariables)
	fs.VisitAll(func(f *flag.Flag) { known = append(known, envName(f.Name)) })
	return known
}

// editDistance is the Levenshtein distance of a and b (ASCII names).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"platd/config"
)

// envPrefix starts the environment variable of every serve flag:
// --secure-port is also PLATD_SECURE_PORT.
const envPrefix = "PLATD_"

// envName is the environment variable of a flag.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// withEnv gives every flag its PLATD_* variable. urfave/cli reads it when
// the flag is not on the command line, so a flag beats its variable.
func withEnv(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		env := []string{envName(f.Names()[0])}
		switch f := f.(type) {
		case *cli.StringFlag:
			f.EnvVars = env
		case *cli.IntFlag:
			f.EnvVars = env
		case *cli.BoolFlag:
			f.EnvVars = env
		case *cli.DurationFlag:
			f.EnvVars = env
		case *cli.Float64Flag:
			f.EnvVars = env
		case *cli.StringSliceFlag:
			f.EnvVars = env
		default:
			panic(fmt.Sprintf("flag %s: %T has no environment variable", f.Names()[0], f))
		}
	}
	return flags
}

// sharedEnv gives the flags cmd shares with serve (--data-dir,
// --cert-dir, --brand) serve's variables, so one exported PLATD_DATA_DIR
// serves every command; its own flags have none.
func sharedEnv(cmd *cli.Command, serveFlags []cli.Flag) *cli.Command {
	var shared []cli.Flag
	for _, f := range cmd.Flags {
		if slices.ContainsFunc(serveFlags, func(s cli.Flag) bool { return s.Names()[0] == f.Names()[0] }) {
			shared = append(shared, f)
		}
	}
	withEnv(shared)
	return cmd
}

// configFlagName is --config: a YAML file of flag values.
const configFlagName = "config"

// configFlag is new for each app: urfave/cli writes a flag's
// environment value into the flag itself.
func configFlag() cli.Flag {
	return &cli.StringFlag{Name: configFlagName, Usage: "YAML file whose keys are flag names (secure-port: 7443); a flag or its PLATD_* variable beats the file"}
}

// applyConfigFile sets, from the --config file, every flag that neither
// the command line nor the environment set. A key that names no flag, or
// a value of the wrong shape, is an error naming it.
func applyConfigFile(c *cli.Context, flags []cli.Flag) error {
	path := c.String(configFlagName)
	if path == "" {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: --config %s: %s", config.ErrInvalid, path, fmt.Sprintf(format, args...))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: --config: %w", config.ErrInvalid, err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fail("%v", err)
	}
	var values map[string]any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&values); err != nil {
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			return nil // an empty file
		}
		return fail("want a mapping of flag names to values, such as \"secure-port: 7443\"")
	}
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		if n := f.Names()[0]; n != configFlagName {
			byName[n] = f
		}
	}
	var unknown []string
	for k := range values {
		if byName[k] == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fail("unknown keys %s: the keys are the names of platd serve's flags without the dashes (platd serve --help lists them)", strings.Join(unknown, ", "))
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c.IsSet(k) {
			continue
		}
		_, slice := byName[k].(*cli.StringSliceFlag)
		var items []any
		switch v := values[k].(type) {
		case []any:
			if !slice {
				return fail("%s: want one value, not a list", k)
			}
			items = v
		case map[string]any:
			// feature-gates: {WatchList: false} reads as WatchList=false.
			if !slice {
				return fail("%s: want one value, not a mapping", k)
			}
			names := make([]string, 0, len(v))
			for name := range v {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				switch val := v[name].(type) {
				case string, bool, json.Number:
					items = append(items, fmt.Sprintf("%s=%v", name, val))
				default:
					return fail("%s: %s: want true, false or text", k, name)
				}
			}
		case nil:
			continue
		default:
			items = []any{v}
		}
		for _, it := range items {
			var s string
			switch it := it.(type) {
			case string:
				s = it
			case json.Number:
				s = it.String()
			case bool:
				s = fmt.Sprint(it)
			default:
				return fail("%s: want %s", k, expectedFormat(byName[k]))
			}
			if err := c.Set(k, s); err != nil {
				return fail("%s: invalid value %q: want %s", k, s, expectedFormat(byName[k]))
			}
		}
	}
	return nil
}

// expectedFormat says what a flag's value looks like, for errors.
func expectedFormat(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.IntFlag:
		return fmt.Sprintf("an integer, such as %d", f.Value)
	case *cli.Float64Flag:
		return fmt.Sprintf("a number, such as %g", f.Value)
	case *cli.DurationFlag:
		return "a duration such as 90s, 5m or 1h30m (units ns, us, ms, s, m, h)"
	case *cli.BoolFlag:
		return "true or false"
	case *cli.StringSliceFlag:
		return "text, a list of text, or a mapping of names to values"
	}
	return "text"
}

// Go's flag package words its parse errors for its own -flag style. The
// expressions are compiled on the first error, not at every start.
var (
	invalidFlagValue = lazyRegexp(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([a-z0-9-]+): (.*)$`)
	undefinedFlag    = lazyRegexp(`^flag provided but not defined: -+([^ ]+)$`)
	missingValue     = lazyRegexp(`^flag needs an argument: -+([^ ]+)$`)
	envValue         = lazyRegexp(`^could not parse "(.*)" as .* from environment variable "(.*)" for flag ([a-z0-9-]+): .*$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// usageError rewords a command line error to name the flag as it is
// typed and the format its value takes.
func usageError(flags []cli.Flag, err error) error {
	find := func(name string) cli.Flag {
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
		if i < 0 {
			return nil
		}
		return flags[i]
	}
	msg := err.Error()
	if m := invalidFlagValue().FindStringSubmatch(msg); m != nil {
		if f := find(m[2]); f != nil {
			msg = fmt.Sprintf("--%s %q: want %s", m[2], m[1], expectedFormat(f))
		}
	} else if m := envValue().FindStringSubmatch(msg); m != nil {
		if f := find(m[3]); f != nil {
			msg = fmt.Sprintf("%s=%q (--%s): want %s", m[2], m[1], m[3], expectedFormat(f))
		}
	} else if m := undefinedFlag().FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("flag provided but not defined: --%s (platd --help lists the flags)", m[1])
	} else if m := missingValue().FindStringSubmatch(msg); m != nil {
		if f := find(m[1]); f != nil {
			msg = fmt.Sprintf("--%s needs a value: %s", m[1], expectedFormat(f))
		}
	}
	return fmt.Errorf("%w: %s", errUsage, msg)
}

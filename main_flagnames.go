package main

import "github.com/urfave/cli/v2"

// urfave/cli derives a flag's names with a regular expression each time
// it asks for them, and it asks for every flag's names once per flag it
// looks up (runFlagActions and IsSet on every run): quadratic in the
// serve flags, milliseconds of every start. The flags handed to cli
// answer Names from a slice derived once; everything else is the
// wrapped flag's own.

type (
	stringFlag struct {
		*cli.StringFlag
		names []string
	}
	intFlag struct {
		*cli.IntFlag
		names []string
	}
	boolFlag struct {
		*cli.BoolFlag
		names []string
	}
	durationFlag struct {
		*cli.DurationFlag
		names []string
	}
	float64Flag struct {
		*cli.Float64Flag
		names []string
	}
	stringSliceFlag struct {
		*cli.StringSliceFlag
		names []string
	}
)

func (f *stringFlag) Names() []string      { return f.names }
func (f *intFlag) Names() []string         { return f.names }
func (f *boolFlag) Names() []string        { return f.names }
func (f *durationFlag) Names() []string    { return f.names }
func (f *float64Flag) Names() []string     { return f.names }
func (f *stringSliceFlag) Names() []string { return f.names }

// fixedNames returns flags wrapped to answer Names without recomputing
// them; a flag of another type is returned as it is. The wrappers share
// the flags' state: parsing into either is parsing into both.
func fixedNames(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		names := f.Names()
		switch f := f.(type) {
		case *cli.StringFlag:
			out[i] = &stringFlag{f, names}
		case *cli.IntFlag:
			out[i] = &intFlag{f, names}
		case *cli.BoolFlag:
			out[i] = &boolFlag{f, names}
		case *cli.DurationFlag:
			out[i] = &durationFlag{f, names}
		case *cli.Float64Flag:
			out[i] = &float64Flag{f, names}
		case *cli.StringSliceFlag:
			out[i] = &stringSliceFlag{f, names}
		default:
			out[i] = f
		}
	}
	return out
}

// plainFlag returns the cli flag a fixedNames wrapper holds, or f.
func plainFlag(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *stringFlag:
		return f.StringFlag
	case *intFlag:
		return f.IntFlag
	case *boolFlag:
		return f.BoolFlag
	case *durationFlag:
		return f.DurationFlag
	case *float64Flag:
		return f.Float64Flag
	case *stringSliceFlag:
		return f.StringSliceFlag
	}
	return f
}

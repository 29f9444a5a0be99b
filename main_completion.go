package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionCommand is `platd completion bash|zsh|fish`: a script that
// completes platd's commands, flags, and file names after flags that
// take a value. The script is generated from the command line itself,
// so it never lists a flag that does not exist.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash (source <(platd completion bash)), zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			shell := c.Args().First()
			if c.NArg() != 1 {
				return fmt.Errorf("%w: platd completion takes one shell: bash, zsh or fish", errUsage)
			}
			switch shell {
			case "bash":
				return writeBash(c.App.Writer, c.App)
			case "zsh":
				// zsh runs the bash script through its bash emulation.
				fmt.Fprintln(c.App.Writer, "# platd completion for zsh: source <(platd completion zsh)\nautoload -U +X bashcompinit && bashcompinit")
				return writeBash(c.App.Writer, c.App)
			case "fish":
				return writeFish(c.App.Writer, c.App)
			}
			return fmt.Errorf("%w: unknown shell %q: want bash, zsh or fish", errUsage, shell)
		},
	}
}

// flagWords are a command's flags as typed, and those that take a value.
func flagWords(flags []cli.Flag) (all, valued []string) {
	for _, f := range flags {
		for _, n := range f.Names() {
			w := "--" + n
			if len(n) == 1 {
				w = "-" + n
			}
			all = append(all, w)
			if _, isBool := plainFlag(f).(*cli.BoolFlag); !isBool {
				valued = append(valued, w)
			}
		}
	}
	sort.Strings(all)
	sort.Strings(valued)
	return all, valued
}

func commandNames(app *cli.App) []string {
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return names
}

func writeBash(w io.Writer, app *cli.App) error {
	cmds := commandNames(app)
	rootFlags, rootValued := flagWords(app.Flags)
	var b strings.Builder
	b.WriteString("# platd completion for bash: source <(platd completion bash)\n")
	b.WriteString("_platd() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd= w opts valued\n")
	fmt.Fprintf(&b, "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n    case \"$w\" in %s) cmd=\"$w\"; break;; esac\n  done\n", strings.Join(cmds, "|"))
	b.WriteString("  case \"$cmd\" in\n")
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		all, valued := flagWords(c.Flags)
		if c.Name == "completion" {
			all = []string{"bash", "zsh", "fish"}
		}
		fmt.Fprintf(&b, "    %s) opts=%q; valued=%q;;\n", c.Name, strings.Join(all, " "), " "+strings.Join(valued, " ")+" ")
	}
	fmt.Fprintf(&b, "    *) opts=%q; valued=%q;;\n", strings.Join(append(append([]string{}, cmds...), rootFlags...), " "), " "+strings.Join(rootValued, " ")+" ")
	b.WriteString("  esac\n")
	b.WriteString("  if [[ \"$valued\" == *\" $prev \"* ]]; then\n    COMPREPLY=( $(compgen -f -- \"$cur\") )\n    return\n  fi\n")
	b.WriteString("  COMPREPLY=( $(compgen -W \"$opts\" -- \"$cur\") )\n}\n")
	b.WriteString("complete -o default -F _platd platd\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFish(w io.Writer, app *cli.App) error {
	cmds := commandNames(app)
	quote := func(s string) string {
		if i := strings.IndexAny(s, ":;("); i > 0 {
			s = strings.TrimSpace(s[:i]) // the first clause is enough in a menu
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	var b strings.Builder
	b.WriteString("# platd completion for fish: platd completion fish > ~/.config/fish/completions/platd.fish\n")
	b.WriteString("complete -c platd -f\n")
	flags := func(cond string, fl []cli.Flag) {
		for _, f := range fl {
			names := f.Names()
			line := fmt.Sprintf("complete -c platd -n %s -l %s", quote(cond), names[0])
			for _, a := range names[1:] {
				if len(a) == 1 {
					line += " -s " + a
				}
			}
			if _, isBool := plainFlag(f).(*cli.BoolFlag); !isBool {
				line += " -r -F"
			}
			if u, ok := f.(cli.DocGenerationFlag); ok && u.GetUsage() != "" {
				line += " -d " + quote(u.GetUsage())
			}
			b.WriteString(line + "\n")
		}
	}
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		fmt.Fprintf(&b, "complete -c platd -n '__fish_use_subcommand' -a %s -d %s\n", c.Name, quote(c.Usage))
		flags("__fish_seen_subcommand_from "+c.Name, c.Flags)
	}
	b.WriteString("complete -c platd -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	flags("not __fish_seen_subcommand_from "+strings.Join(cmds, " "), app.Flags)
	_, err := io.WriteString(w, b.String())
	return err
}

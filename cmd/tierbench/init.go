package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/study"
)

// newInitCmd writes a study to start from: a first study file should be
// edited from one that validates, with each key explained where it stands,
// rather than written from the docs.
func newInitCmd() *cobra.Command {
	var out, engineName string
	cmd := &cobra.Command{
		Use:   "init [-o FILE] [--engine NAME]",
		Short: "Write a commented study to start from (for pebble, the built-in default study) that validate accepts",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			text, err := study.Starter(catalog.Default(), engineName)
			if err != nil {
				return badInput(fmt.Errorf("--engine: %w; see `tierbench engines`", err))
			}
			if out == "" {
				fmt.Print(text)
				return nil
			}
			if err := writeNew(out, text); err != nil {
				return badInput(err)
			}
			fmt.Fprintf(os.Stderr, "wrote %s: check it with `tierbench validate %s`, run it with `tierbench run %s`\n", out, out, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (refused if it exists); default: standard output")
	cmd.Flags().StringVar(&engineName, "engine", "pebble", "the engine to study (tierbench engines lists them)")
	return cmd
}

// writeNew writes text to a new file path, refusing one that exists: a
// study someone edited is not overwritten by a starter.
func writeNew(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("%s exists, and init does not overwrite a file: give another -o, or remove it first", path)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot write %s: its folder does not exist; create it or give another -o", path)
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

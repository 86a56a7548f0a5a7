package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/tier/profile"
)

// newProfilesCmd lists the shipped device profiles (or the named ones, or
// profile files) with their figures and sources.
func newProfilesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "profiles [NAME|FILE...]",
		Short: "List the device profiles an emulated tier can take (profile:), with their figures and sources",
		RunE: func(_ *cobra.Command, refs []string) error {
			if format != "table" && format != "json" {
				return badInput(fmt.Errorf("unknown --format %q: use table or json", format))
			}
			var ps []profile.Profile
			if len(refs) == 0 {
				all, err := profile.Shipped()
				if err != nil {
					return err
				}
				ps = all
			}
			for _, ref := range refs {
				p, err := profile.Load(ref, "")
				if err != nil {
					return badInput(err)
				}
				ps = append(ps, p)
			}
			if format == "json" {
				return profile.WriteJSON(os.Stdout, ps)
			}
			return profile.WriteText(os.Stdout, ps)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

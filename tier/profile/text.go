package profile

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// oneDocument refuses a profile file that goes on past its first YAML
// document: the second would be silently ignored, and it may be the one
// the user meant.
func oneDocument(dec *yaml.Decoder) error {
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return errors.New("the file holds a second YAML document (after ---); keep one profile per file")
	}
	return nil
}

// nameRe is a profile's name: a word a study can write (profile: NAME).
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkText refuses a name that is not one word, and text that validate
// and tierbench profiles would print with an escape sequence or a
// bidirectional override in it, which a terminal acts on.
func (p *Profile) checkText() error {
	if !nameRe.MatchString(p.Name) {
		return fmt.Errorf("name %s must be one word of letters, digits, '.', - and _ (at most 64); write name: my-ssd", excerpt(p.Name))
	}
	for _, f := range []struct{ key, text, allowed string }{
		{"device", p.Device, ""}, {"source", p.Source, "\n"}, {"assumed", p.Assumed, "\n"},
	} {
		if i := strings.IndexFunc(f.text, func(r rune) bool { return hidden(r) && !strings.ContainsRune(f.allowed, r) }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(f.text[i:])
			return fmt.Errorf("%s %s holds a control or bidirectional character (U+%04X), which terminals would act on; write it as plain text", f.key, excerpt(f.text), r)
		}
	}
	return nil
}

// hidden reports a character a terminal acts on rather than shows: a
// control character, a format character (U+202E right-to-left override)
// or a line or paragraph separator, as tier.CheckIdentifier refuses.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}

// excerpt quotes s for a message, escaped, cut to its first 24
// characters when longer than 40.
func excerpt(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:24])) + "..."
}

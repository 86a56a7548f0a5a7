package sqlwork

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

type stateErr string

func (e stateErr) Error() string    { return "ERROR: something (SQLSTATE " + string(e) + ")" }
func (e stateErr) SQLState() string { return string(e) }

// printedState has no SQLState method: only its text says the SQLSTATE.
type printedState string

func (e printedState) Error() string { return "ERROR: something (SQLSTATE " + string(e) + ")" }

func TestConflict(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"postgres serialization", stateErr("40001"), "serialization failure (SQLSTATE 40001)"},
		{"postgres serialization wrapped", fmt.Errorf("wrapped: %w", stateErr("40001")), "serialization failure"},
		{"postgres deadlock", stateErr("40P01"), "deadlock (SQLSTATE 40P01)"},
		{"postgres deadlock printed", printedState("40P01"), "deadlock (SQLSTATE 40P01)"},
		{"postgres other", stateErr("57014"), ""},
		{"postgres unique violation", stateErr("23505"), ""},
		{"mysql deadlock", errors.New("Error 1213 (40001): Deadlock found when trying to get lock; try restarting transaction"), "deadlock (MySQL error 1213)"},
		{"old mysql deadlock", errors.New("Error 1213: Deadlock found when trying to get lock"), "deadlock (MySQL error 1213)"},
		{"mysql lock wait", errors.New("Error 1205 (HY000): Lock wait timeout exceeded; try restarting transaction"), "lock wait timeout (MySQL error 1205)"},
		{"mysql other", errors.New("Error 1146 (42S02): Table 'x' doesn't exist"), ""},
		{"mysql error number inside another", errors.New("Error 12130 (HY000): no such thing"), ""},
		{"plain", errors.New("connection refused"), ""},
		{"broken pipe", errors.New("broken pipe"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Conflict(tc.err)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Conflict(%q) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestAppendInsert(t *testing.T) {
	row := func(b []byte, i int64) []byte {
		b = append(b, '(')
		b = strconv.AppendInt(b, i, 10)
		return append(b, ", 'x')"...)
	}
	if got := string(AppendInsert(nil, "t", "id, v", 7, 3, row)); got != "INSERT INTO t (id, v) VALUES (7, 'x'), (8, 'x'), (9, 'x')" {
		t.Errorf("three rows: %s", got)
	}
	b := AppendInsert(nil, "t", "id, v", 1, 1, row)
	if got := string(AppendInsert(b[:0], "u", "id, v", 5, 1, row)); got != "INSERT INTO u (id, v) VALUES (5, 'x')" {
		t.Errorf("reused buffer: %s", got)
	}
}

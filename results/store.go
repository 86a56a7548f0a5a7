package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite: keeps tierbench one static binary

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
)

// DBFile is the store's file name inside the results directory.
const DBFile = "tierbench.db"

// schemaVersion is stored in PRAGMA user_version; bump it with a migration.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS studies (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	engine      TEXT NOT NULL,
	workload    TEXT NOT NULL,
	status      TEXT NOT NULL,
	started_at  TEXT NOT NULL,
	finished_at TEXT,
	doc         TEXT NOT NULL  -- the Study record as JSON
);
CREATE TABLE IF NOT EXISTS runs (
	id          TEXT PRIMARY KEY,
	study_id    TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	placement   TEXT NOT NULL,
	durability  TEXT NOT NULL,
	clients     INTEGER NOT NULL,
	repeat      INTEGER NOT NULL,
	status      TEXT NOT NULL,
	error       TEXT NOT NULL,
	throughput  REAL NOT NULL,
	doc         TEXT NOT NULL  -- the Run record as JSON
);
CREATE INDEX IF NOT EXISTS runs_by_study ON runs(study_id, seq);
CREATE TABLE IF NOT EXISTS histograms (
	run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	op      TEXT NOT NULL,
	kind    TEXT NOT NULL,
	phase   TEXT NOT NULL,
	hdr     BLOB NOT NULL,  -- HdrHistogram V2 compressed encoding, nanoseconds
	PRIMARY KEY (run_id, op, kind, phase)
);
`

// Store is the results database in a results directory.
type Store struct {
	db  *sql.DB
	dir string
	// readOnly stores (OpenReadOnly) write nothing; missing names the
	// tables a store made by an older tierbench lacks, read as empty.
	readOnly bool
	missing  map[string]bool
}

// ErrNoStudy is returned when nothing stored matches: no store, no study
// yet, or no study with that id.
var ErrNoStudy = errors.New("no such study")

// nothingStored says what was looked for and where, and is ErrNoStudy,
// whose own words it does not repeat.
type nothingStored struct{ msg string }

func (e nothingStored) Error() string        { return e.msg }
func (e nothingStored) Is(target error) bool { return target == ErrNoStudy }

// ErrAmbiguous is returned when an id prefix matches more than one study:
// the user's to fix with a longer prefix, not "nothing stored".
var ErrAmbiguous = errors.New("ambiguous study id")

// Open opens (creating if needed) the store in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create results directory %s: %w", dir, err)
	}
	return open(filepath.Join(dir, DBFile), dir)
}

// OpenExisting opens the store in dir without creating anything.
func OpenExisting(dir string) (*Store, error) {
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nothingStored{fmt.Sprintf("no results in %s: run a study first, or pass --results DIR", dir)}
	}
	return open(path, dir)
}

// OpenReadOnly opens the store in dir for reading only, creating nothing
// and leaving its bytes as they were: what show, list, export, report and
// compare use. A store made before a table existed reads that table as
// empty.
func OpenReadOnly(dir string) (*Store, error) {
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nothingStored{fmt.Sprintf("no results in %s: run a study first, or pass --results DIR", dir)}
	}
	// Reading a WAL-mode database makes its -wal file if it is missing,
	// and a reader cannot remove it again. No -wal file means no writer
	// has the store open and all it wrote is in the file itself, which
	// is then read as immutable: nothing made, nothing locked. A writer
	// at work (a study running) keeps its -wal, read as usual.
	mode := "mode=ro"
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) {
		mode = "immutable=1"
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+mode+"&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if v > schemaVersion {
		db.Close()
		return nil, fmt.Errorf("results store %s has schema %d, newer than this tierbench (%d): upgrade tierbench", path, v, schemaVersion)
	}
	s := &Store{db: db, dir: dir, readOnly: true, missing: map[string]bool{}}
	for _, table := range []string{"studies", "runs", "histograms", "interval_histograms", "probes"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil {
			db.Close()
			return nil, fmt.Errorf("open results store %s: %w", path, err)
		}
		s.missing[table] = n == 0
	}
	if s.missing["studies"] || s.missing["runs"] {
		db.Close()
		return nil, nothingStored{fmt.Sprintf("no results in %s: its store holds no study yet; run a study first, or pass --results DIR", dir)}
	}
	return s, nil
}

func open(path, dir string) (*Store, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if v > schemaVersion {
		db.Close()
		return nil, fmt.Errorf("results store %s has schema %d, newer than this tierbench (%d): upgrade tierbench", path, v, schemaVersion)
	}
	if _, err := db.Exec(schema + probeSchema + intervalSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		db.Close()
		return nil, fmt.Errorf("set schema version in %s: %w", path, err)
	}
	return &Store{db: db, dir: dir}, nil
}

// Dir is the results directory.
func (s *Store) Dir() string { return s.dir }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

const timeFmt = time.RFC3339Nano

// PutStudy inserts or replaces a study record.
func (s *Store) PutStudy(ctx context.Context, st *Study) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode study %s: %w", st.ID, err)
	}
	var finished any
	if st.FinishedAt != nil {
		finished = st.FinishedAt.UTC().Format(timeFmt)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO studies (id, name, engine, workload, status, started_at, finished_at, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET status=excluded.status, finished_at=excluded.finished_at, doc=excluded.doc`,
		st.ID, st.Name, st.Engine, st.Workload, st.Status, st.StartedAt.UTC().Format(timeFmt), finished, string(doc))
	if err != nil {
		return fmt.Errorf("store study %s: %w", st.ID, err)
	}
	return nil
}

// AddRun stores a run and its histograms in one transaction.
func (s *Store) AddRun(ctx context.Context, r *Run, hists []Histogram) error {
	return s.putRun(ctx, r, hists, false)
}

// ReplaceRun stores a run and its histograms in place of a stored run
// with its id, if there is one (a resumed study's new attempt at a cell
// whose run failed), in one transaction: a kill leaves the old run or the
// new one, never neither.
func (s *Store) ReplaceRun(ctx context.Context, r *Run, hists []Histogram) error {
	return s.putRun(ctx, r, hists, true)
}

func (s *Store) putRun(ctx context.Context, r *Run, hists []Histogram, replace bool) (err error) {
	doc, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store run %s: %w", r.ID, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if replace {
		for _, q := range []string{`DELETE FROM histograms WHERE run_id = ?`, `DELETE FROM interval_histograms WHERE run_id = ?`, `DELETE FROM runs WHERE id = ?`} {
			if _, err = tx.ExecContext(ctx, q, r.ID); err != nil {
				return fmt.Errorf("replace run %s: %w", r.ID, err)
			}
		}
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO runs (id, study_id, seq, placement, durability, clients, repeat, status, error, throughput, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.StudyID, r.Seq, r.Placement, r.Durability, r.Clients, r.Repeat, r.Status, r.Error, r.ThroughputOpsS, string(doc)); err != nil {
		return fmt.Errorf("store run %s: %w", r.ID, err)
	}
	for _, h := range hists {
		if h.Interval != nil {
			if err = putInterval(ctx, tx, r.ID, h); err != nil {
				return err
			}
			continue
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO histograms (run_id, op, kind, phase, hdr) VALUES (?, ?, ?, ?, ?)`,
			r.ID, h.Op, h.Kind, h.Phase, h.Encoded); err != nil {
			return fmt.Errorf("store histogram %s/%s of run %s: %w", h.Op, h.Kind, r.ID, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store run %s: %w", r.ID, err)
	}
	return nil
}

// Studies lists studies, newest first.
func (s *Store) Studies(ctx context.Context) ([]Study, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT doc FROM studies ORDER BY started_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list studies: %w", err)
	}
	return scanDocs[Study](rows, "studies")
}

// scanDocs decodes the JSON doc column of every row and closes rows.
func scanDocs[T any](rows *sql.Rows, what string) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		var v T
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// maxCandidates bounds the studies an ambiguous id prefix lists.
const maxCandidates = 10

// Study finds a study by id, unique id prefix, or "latest". A prefix that
// matches several studies is refused with them listed (ErrAmbiguous)
// rather than one picked: a study the user did not mean would be shown as
// the answer.
func (s *Store) Study(ctx context.Context, ref string) (*Study, error) {
	var rows *sql.Rows
	var err error
	if ref == "" || ref == "latest" {
		rows, err = s.db.QueryContext(ctx, `SELECT doc FROM studies ORDER BY started_at DESC, id DESC LIMIT 1`)
	} else {
		rows, err = s.db.QueryContext(ctx, `SELECT doc FROM studies WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC, started_at DESC, id DESC LIMIT ?`,
			ref, escapeLike(ref)+"%", ref, maxCandidates+1)
	}
	if err != nil {
		return nil, fmt.Errorf("find study %q: %w", ref, err)
	}
	found, err := scanDocs[Study](rows, "studies")
	if err != nil {
		return nil, err
	}
	switch {
	case len(found) == 0 && (ref == "" || ref == "latest"):
		return nil, nothingStored{fmt.Sprintf("no studies in %s yet: run one with `tierbench run`, or pass --results DIR", s.dir)}
	case len(found) == 0:
		return nil, nothingStored{fmt.Sprintf("study %q not found in %s: see `tierbench list`, or pass --results DIR", ref, s.dir)}
	case len(found) > 1 && found[0].ID != ref:
		return nil, fmt.Errorf("%w %q: it matches %s in %s; give more of the id of the one you mean:\n%s",
			ErrAmbiguous, ref, matchCount(len(found)), s.dir, candidates(found))
	}
	return &found[0], nil
}

// matchCount says how many studies matched, when more than the list shows.
func matchCount(n int) string {
	if n > maxCandidates {
		return fmt.Sprintf("more than %d studies", maxCandidates)
	}
	return fmt.Sprintf("%d studies", n)
}

// candidates lists the studies an ambiguous prefix matched, one a line.
func candidates(found []Study) string {
	var b strings.Builder
	for i, st := range found {
		if i == maxCandidates {
			b.WriteString("  ...\n")
			break
		}
		fmt.Fprintf(&b, "  %s  %q  %s\n", st.ID, st.Name, st.StartedAt.Local().Format("2006-01-02 15:04"))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Runs returns a study's runs in execution order.
func (s *Store) Runs(ctx context.Context, studyID string) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT doc FROM runs WHERE study_id = ? ORDER BY seq`, studyID)
	if err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", studyID, err)
	}
	return scanDocs[Run](rows, "runs of "+studyID)
}

// Histogram loads one stored histogram.
func (s *Store) Histogram(ctx context.Context, runID, op, kind, phase string) (*hdr.Histogram, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT hdr FROM histograms WHERE run_id=? AND op=? AND kind=? AND phase=?`,
		runID, op, kind, phase).Scan(&b)
	if err != nil {
		return nil, fmt.Errorf("load histogram %s/%s/%s of run %s: %w", op, kind, phase, runID, err)
	}
	return hist.Decode(b)
}

package bolt_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"platd/bolt"
	"platd/bolt/storetest"
)

func TestTag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open := func(tag string) (*bolt.DB, error) {
		return bolt.Open(path, bolt.Options{Stamp: storetest.Stamp, Logger: slog.New(slog.DiscardHandler), Tag: tag})
	}
	reopen := func(tag string) *bolt.DB {
		t.Helper()
		db, err := open(tag)
		if err != nil {
			t.Fatalf("open with %q: %v", tag, err)
		}
		return db
	}
	closeDB := func(db *bolt.DB) {
		t.Helper()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := bolt.CheckFile(path); err != nil {
			t.Fatal(err)
		}
	}
	// A file written before tags existed: objects, no tag.
	db := reopen("")
	if _, err := db.Create(context.Background(), "/k/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	closeDB(db)
	db = reopen("blue")
	if !db.Untagged() {
		t.Fatal("a file with objects and no tag is not reported untagged")
	}
	closeDB(db)
	// Not recorded: another tag still opens it.
	db = reopen("green")
	if !db.Untagged() {
		t.Fatal("untagged file tagged without RecordTag")
	}
	if err := db.RecordTag(); err != nil || db.Untagged() {
		t.Fatalf("RecordTag: %v, untagged %v", err, db.Untagged())
	}
	closeDB(db)
	_, err := open("blue")
	var te *bolt.TagError
	if !errors.As(err, &te) || !errors.Is(err, bolt.ErrTagMismatch) || te.Recorded != "green" || te.Wanted != "blue" {
		t.Fatalf("open with another tag: %v", err)
	}
	db = reopen("green")
	if db.Untagged() {
		t.Error("tagged file reported untagged")
	}
	closeDB(db)
	// No tag asked for: nothing is checked.
	closeDB(reopen(""))

	// A new file records its tag at once.
	path = filepath.Join(t.TempDir(), "new.db")
	db = reopen("blue")
	if db.Untagged() {
		t.Error("new file reported untagged")
	}
	closeDB(db)
	if _, err := open("green"); !errors.Is(err, bolt.ErrTagMismatch) {
		t.Fatalf("new file: open with another tag: %v", err)
	}
}

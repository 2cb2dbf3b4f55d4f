//go:build linux

package secret

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/pacer-load/pacer/internal/input"
)

// askAsync runs AskPassword in a goroutine.
func askAsync(ctx context.Context, in io.Reader) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := AskPassword(ctx, in, io.Discard)
		done <- err
	}()
	return done
}

func awaitAsk(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("AskPassword still waits after the cancel")
		return nil
	}
}

// TestAskPasswordInterruptedOnAPipe: --askpass from a pipe that stays
// open and silent waits until the context is cancelled.
func TestAskPasswordInterruptedOnAPipe(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close() // ends the read left behind
	ctx, cancel := context.WithCancel(context.Background())
	done := askAsync(ctx, pr)
	time.Sleep(20 * time.Millisecond) // it waits first (the outcome is the same if not)
	cancel()
	if err := awaitAsk(t, done); !errors.Is(err, input.ErrInterrupted) {
		t.Errorf("AskPassword = %v; want ErrInterrupted", err)
	}
}

// TestAskPasswordInterruptedOnATerminal: on a terminal, the cancel ends
// the wait and gives the terminal its echo back.
func TestAskPasswordInterruptedOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	echo := func() bool {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ECHO != 0
	}
	if !echo() {
		t.Fatal("a new pty without echo")
	}
	// A password typed is read, without echo while it is typed.
	done := make(chan string, 1)
	go func() {
		pw, _ := AskPassword(context.Background(), tty, io.Discard)
		done <- pw
	}()
	time.Sleep(50 * time.Millisecond)
	ptmx.Write([]byte("hunter2\n"))
	select {
	case pw := <-done:
		if pw != "hunter2" {
			t.Errorf("AskPassword = %q", pw)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AskPassword did not read the line")
	}
	if !echo() {
		t.Error("echo not restored after the password")
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := askAsync(ctx, tty)
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := awaitAsk(t, errc); !errors.Is(err, input.ErrInterrupted) {
		t.Errorf("AskPassword = %v; want ErrInterrupted", err)
	}
	if !echo() {
		t.Error("echo not restored after the interruption")
	}
}

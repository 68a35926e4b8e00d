package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run()) }

func run() int {
	mode := flag.String("mode", "ok", "ok, hang, garbage, flood, wrong-version or fail")
	flag.Parse()
	var req struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Image      string `json:"image"`
	}
	dec := json.NewDecoder(os.Stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Kind != "CredentialProviderRequest" {
		fmt.Fprintf(os.Stderr, "bad request: %v (kind %q)\n", err, req.Kind)
		return 1
	}
	if f := os.Getenv("TEST_COUNT_FILE"); f != "" {
		out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(out, req.Image)
			out.Close()
		}
	}
	done, err := recordConcurrency()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer done()
	if f := os.Getenv("TEST_CHILD_PID_FILE"); f != "" && *mode != "sleep" {
		if err := startChild(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	switch *mode {
	case "hang":
		child := exec.Command(os.Args[0], "--mode=sleep")
		child.Stdin = strings.NewReader(`{"apiVersion":"x","kind":"CredentialProviderRequest","image":"x"}`)
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if f := os.Getenv("TEST_PID_FILE"); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		}
		time.Sleep(time.Hour)
		return 0
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	case "garbage":
		fmt.Println("Welcome to the credential provider! Your token is in the mail.")
		return 0
	case "flood":
		line := bytes.Repeat([]byte("x"), 4096)
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				return 1
			}
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "could not log in with", os.Getenv("TEST_PASSWORD"))
		return 1
	case "wrong-version":
		req.APIVersion = "credentialprovider.kubelet.k8s.io/v1alpha1"
	case "ok":
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", *mode)
		return 2
	}
	resp := map[string]any{
		"apiVersion":   req.APIVersion,
		"kind":         "CredentialProviderResponse",
		"cacheKeyType": orDefault(os.Getenv("TEST_CACHE_KEY_TYPE"), "Registry"),
		"auth": map[string]any{
			orDefault(os.Getenv("TEST_AUTH_KEY"), strings.SplitN(req.Image, "/", 2)[0]): map[string]string{
				"username": os.Getenv("TEST_USERNAME"),
				"password": os.Getenv("TEST_PASSWORD"),
			},
		},
	}
	if d := os.Getenv("TEST_CACHE_DURATION"); d != "" {
		resp["cacheDuration"] = d
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		return 1
	}
	return 0
}

// recordConcurrency, with $TEST_RUNNING_DIR set, marks this run as
// running there, appends how many runs are (this one included) to
// $TEST_CONCURRENCY_FILE, and sleeps $TEST_SLEEP so concurrent runs
// overlap; done unmarks it.
func recordConcurrency() (done func(), err error) {
	dir := os.Getenv("TEST_RUNNING_DIR")
	if dir == "" {
		return func() {}, nil
	}
	mark := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		return nil, err
	}
	running, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile(os.Getenv("TEST_CONCURRENCY_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(out, len(running))
	out.Close()
	if d, err := time.ParseDuration(os.Getenv("TEST_SLEEP")); err == nil {
		time.Sleep(d)
	}
	return func() { os.Remove(mark) }, nil
}

// startChild starts a child that sleeps for an hour, without the plugin's
// output pipes or environment, and appends its pid to pidFile: a plugin
// that leaves a helper behind when it exits.
func startChild(pidFile string) error {
	child := exec.Command(os.Args[0], "--mode=sleep")
	child.Stdin = strings.NewReader(`{"apiVersion":"x","kind":"CredentialProviderRequest","image":"x"}`)
	child.Env = []string{}
	if err := child.Start(); err != nil {
		return err
	}
	out, err := os.OpenFile(pidFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = fmt.Fprintln(out, child.Process.Pid)
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
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

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

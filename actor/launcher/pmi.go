package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// MPICH's Hydra puts no job id in its ranks' environment (PMI_RANK,
// PMI_SIZE, PMI_FD, MPI_LOCALNRANKS and MPI_LOCALRANKID are all there
// is), but it hands each rank a socket to its PMI server in PMI_FD, and
// the server names the job's key-value space after the job: kvs_<pid of
// mpiexec>_<group>_<random>_<host>, the same for every rank and new for
// every mpiexec. PMIKVSName asks for it over PMI-1's wire protocol (lines
// of key=value pairs): init, get_my_kvsname, finalize.

// pmiTimeout bounds the conversation: a PMI server that does not answer
// is an error, not a hang.
const pmiTimeout = 10 * time.Second

// pmiMaxLine is the longest answer line read (PMI-1 caps its own at 1024).
const pmiMaxLine = 1024

// PMIKVSName asks the PMI server on the socket in env's PMI_FD for the
// job's key-value-space name. It speaks to the server once per process
// (the descriptor is closed afterwards).
func PMIKVSName(env Env) (string, error) {
	v, ok := env("PMI_FD")
	if !ok {
		return "", errors.New("PMI_FD is not set")
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return "", fmt.Errorf("PMI_FD=%q is not a file descriptor", v)
	}
	f := os.NewFile(uintptr(fd), "PMI_FD")
	if f == nil {
		return "", fmt.Errorf("PMI_FD=%d is not an open file descriptor", fd)
	}
	defer f.Close()
	c, err := net.FileConn(f) // a copy of the descriptor, with deadlines
	if err != nil {
		return "", fmt.Errorf("PMI_FD=%d is not a socket: %w", fd, err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(pmiTimeout)); err != nil {
		return "", fmt.Errorf("PMI_FD=%d: %w", fd, err)
	}
	name, err := pmiKVSName(c)
	if err != nil {
		return "", fmt.Errorf("PMI server on PMI_FD=%d: %w", fd, err)
	}
	return name, nil
}

// pmiKVSName holds the conversation on rw.
func pmiKVSName(rw io.ReadWriter) (string, error) {
	r := bufio.NewReaderSize(rw, pmiMaxLine)
	ask := func(req, want string) (map[string]string, error) {
		if _, err := io.WriteString(rw, req+"\n"); err != nil {
			return nil, fmt.Errorf("sending %q: %w", req, err)
		}
		line, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, fmt.Errorf("answer to %q longer than %d bytes", req, pmiMaxLine)
			}
			return nil, fmt.Errorf("reading the answer to %q: %w", req, err)
		}
		return parsePMI(string(line), want)
	}
	if _, err := ask("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init"); err != nil {
		return "", err
	}
	m, err := ask("cmd=get_my_kvsname", "my_kvsname")
	if err != nil {
		return "", err
	}
	name := m["kvsname"]
	if name == "" {
		return "", errors.New("answer to get_my_kvsname has no kvsname")
	}
	if _, err := ask("cmd=finalize", "finalize_ack"); err != nil {
		return "", err
	}
	return name, nil
}

// parsePMI parses one PMI-1 answer line ("cmd=NAME key=value ...") and
// checks that it is the command want with no error code.
func parsePMI(line, want string) (map[string]string, error) {
	line = strings.TrimSuffix(line, "\n")
	m := map[string]string{}
	for _, kv := range strings.Fields(line) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("PMI answer %q: %q is not key=value", line, kv)
		}
		for _, c := range v {
			if c < 0x21 || c > 0x7e {
				return nil, fmt.Errorf("PMI answer %q: the value of %s is not printable ASCII", line, k)
			}
		}
		m[k] = v
	}
	if m["cmd"] != want {
		return nil, fmt.Errorf("PMI answer %q, expected cmd=%s", line, want)
	}
	if rc, ok := m["rc"]; ok && rc != "0" {
		return nil, fmt.Errorf("PMI answer %q: error code %s (%s)", line, rc, m["msg"])
	}
	return m, nil
}

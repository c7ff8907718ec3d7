package launcher

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hydra's job name: asked over PMI-1's wire protocol, checked strictly,
// and used for the token only where Hydra is the launcher.

func TestParsePMI(t *testing.T) {
	cases := []struct {
		name, line, want string
		got              map[string]string
		err              string
	}{
		{"init", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n", "response_to_init",
			map[string]string{"cmd": "response_to_init", "pmi_version": "1", "pmi_subversion": "1", "rc": "0"}, ""},
		{"kvs name", "cmd=my_kvsname kvsname=kvs_1178_0_1081193949_vm\n", "my_kvsname",
			map[string]string{"cmd": "my_kvsname", "kvsname": "kvs_1178_0_1081193949_vm"}, ""},
		{"another command", "cmd=barrier_out\n", "my_kvsname", nil, "expected cmd=my_kvsname"},
		{"an error code", "cmd=my_kvsname rc=-1 msg=no_kvs\n", "my_kvsname", nil, "error code -1 (no_kvs)"},
		{"not key=value", "cmd=my_kvsname junk\n", "my_kvsname", nil, `"junk" is not key=value`},
		{"empty key", "cmd=my_kvsname =x\n", "my_kvsname", nil, `"=x" is not key=value`},
		{"control byte", "cmd=my_kvsname kvsname=a\x01b\n", "my_kvsname", nil, "kvsname is not printable ASCII"},
		{"empty line", "\n", "finalize_ack", nil, "expected cmd=finalize_ack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parsePMI(c.line, c.want)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.got, m)
		})
	}
}

// fakePMI answers a conversation on conn as Hydra's PMI server does,
// with answers[request] (a request it has no answer for closes the
// connection), and returns the requests it saw.
func fakePMI(conn net.Conn, answers map[string]string) <-chan []string {
	seen := make(chan []string, 1)
	go func() {
		defer conn.Close()
		var got []string
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			req := strings.TrimSuffix(line, "\n")
			got = append(got, req)
			a, ok := answers[req]
			if !ok {
				break
			}
			if _, err := conn.Write([]byte(a)); err != nil {
				break
			}
		}
		seen <- got
	}()
	return seen
}

var hydraAnswers = map[string]string{
	"cmd=init pmi_version=1 pmi_subversion=1": "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
	"cmd=get_my_kvsname":                      "cmd=my_kvsname kvsname=kvs_1178_0_1081193949_vm\n",
	"cmd=finalize":                            "cmd=finalize_ack\n",
}

func TestPMIKVSNameConversation(t *testing.T) {
	cases := []struct {
		name    string
		answers map[string]string
		err     string
	}{
		{"as Hydra answers", hydraAnswers, ""},
		{"init refused", with(hydraAnswers, "cmd=init pmi_version=1 pmi_subversion=1", "cmd=response_to_init rc=1 msg=version\n"), "error code 1 (version)"},
		{"no name", with(hydraAnswers, "cmd=get_my_kvsname", "cmd=my_kvsname rc=0\n"), "has no kvsname"},
		{"an answer too long", with(hydraAnswers, "cmd=get_my_kvsname", "cmd=my_kvsname kvsname="+strings.Repeat("k", 2000)+"\n"), "longer than 1024 bytes"},
		{"server gone before finalize", with(hydraAnswers, "cmd=finalize", "-"), `answer to "cmd=finalize"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			require.NoError(t, client.SetDeadline(time.Now().Add(10*time.Second)))
			seen := fakePMI(server, c.answers)
			name, err := pmiKVSName(client)
			client.Close()
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "kvs_1178_0_1081193949_vm", name)
			select {
			case got := <-seen:
				require.Equal(t, []string{"cmd=init pmi_version=1 pmi_subversion=1", "cmd=get_my_kvsname", "cmd=finalize"}, got)
			case <-time.After(10 * time.Second):
				t.Fatal("the fake PMI server did not finish")
			}
		})
	}
}

func TestPMIKVSNameBadFD(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		err  string
	}{
		{"unset", map[string]string{}, "PMI_FD is not set"},
		{"not a number", map[string]string{"PMI_FD": "six"}, `PMI_FD="six" is not a file descriptor`},
		{"negative", map[string]string{"PMI_FD": "-3"}, `PMI_FD="-3"`},
		{"not open", map[string]string{"PMI_FD": "987654"}, "PMI_FD=987654"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := PMIKVSName(MapEnv(c.env))
			require.ErrorContains(t, err, c.err)
		})
	}
}

// Under Hydra the job's name goes into the token and the port: two jobs
// with one secret no longer share them. Other launchers, a job id from
// the environment, or no PMI_FD: nothing is asked.
func TestDetectAsksHydraForTheJobName(t *testing.T) {
	asked := 0
	name := "kvs_1178_0_1081193949_vm"
	opt := Options{KVSName: func() (string, error) { asked++; return name, nil }}
	env := with(hydraEnv, "PMI_FD", "6")
	j, err := Detect(MapEnv(env), opt)
	require.NoError(t, err)
	require.Equal(t, 1, asked)
	require.Equal(t, name, j.JobID)
	require.Equal(t, Token("mpiexec (Hydra)", name, "s3cret"), j.Token)

	name = "kvs_1200_0_55_vm" // another mpiexec, the same secret
	other, err := Detect(MapEnv(env), opt)
	require.NoError(t, err)
	require.NotEqual(t, j.Token, other.Token)
	require.NotEqual(t, j.Join, other.Join, "node 0's default port follows the job")

	asked = 0
	for _, e := range []map[string]string{hydraEnv, with(env, "PMI_JOBID", "77"), ompiEnv, with(env, "PMI_RANK", "0", "PMI_SIZE", "1")} {
		_, err := Detect(MapEnv(e), opt)
		require.NoError(t, err)
	}
	require.Zero(t, asked, "asked where Hydra's PMI server is not there or not needed")

	_, err = Detect(MapEnv(env), Options{KVSName: func() (string, error) { return "", errors.New("PMI server on PMI_FD=6: EOF") }})
	require.ErrorContains(t, err, "mpiexec (Hydra): asking for the job's name")
	require.ErrorContains(t, err, "PMI_FD=6")
}

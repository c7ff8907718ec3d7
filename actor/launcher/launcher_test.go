package launcher

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// with returns a copy of base with the changes applied; a value of "-"
// removes the variable.
func with(base map[string]string, changes ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "-" {
			delete(m, changes[i])
		} else {
			m[changes[i]] = changes[i+1]
		}
	}
	return m
}

var (
	ompiEnv = map[string]string{ // as mpirun -np 2 on one host sets it (Open MPI 4.1)
		"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
		"OMPI_MCA_ess_base_jobid": "1737883649", "PMIX_NAMESPACE": "1737883649", "PMIX_RANK": "1",
		SecretVar: "s3cret",
	}
	hydraEnv = map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALNRANKS": "2", SecretVar: "s3cret"}
	srunEnv  = map[string]string{ // srun -n 4 over two hosts
		"SLURM_PROCID": "2", "SLURM_STEP_NUM_TASKS": "4", "SLURM_NTASKS": "4", "SLURM_STEP_NODELIST": "node[07-08]",
		"SLURM_STEP_NUM_NODES": "2", "SLURM_STEP_TASKS_PER_NODE": "2(x2)", "SLURM_JOB_ID": "4711", "SLURM_STEP_ID": "0",
		"SLURMD_NODENAME": "node08", SecretVar: "s3cret",
	}
)

func TestDetect(t *testing.T) {
	ompiPort := DefaultPort("mpirun (Open MPI)", "1737883649", "")
	srunPort := DefaultPort("srun (Slurm)", "4711.0", "")
	cases := []struct {
		name                   string
		env                    map[string]string
		opt                    Options
		launcher, id           string
		rank, size             int
		listen, join           string
		none                   bool // no launcher: a job of one process
		tokenSecret, tokenFrom string
	}{
		{name: "no launcher", env: map[string]string{"HOME": "/root"}, none: true},
		{name: "sbatch script: no step", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "1"}, none: true},
		{name: "mpirun -np 1", env: with(ompiEnv, "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "1"), none: true},
		{name: "srun -n 1", env: with(srunEnv, "SLURM_PROCID", "0", "SLURM_STEP_NUM_TASKS", "1", "SLURM_STEP_NODELIST", "node07",
			"SLURM_STEP_NUM_NODES", "1", "SLURM_STEP_TASKS_PER_NODE", "1"), none: true},
		{name: "mpirun one host, rank 1", env: ompiEnv, launcher: "mpirun (Open MPI)", id: "1737883649", rank: 1, size: 2,
			listen: "127.0.0.1:0", join: "127.0.0.1:" + itoa(ompiPort)},
		{name: "mpirun one host, rank 0", env: with(ompiEnv, "OMPI_COMM_WORLD_RANK", "0"), launcher: "mpirun (Open MPI)", id: "1737883649", size: 2,
			listen: "127.0.0.1:" + itoa(ompiPort), join: "127.0.0.1:" + itoa(ompiPort)},
		{name: "mpirun, jobport", env: ompiEnv, opt: Options{Port: 7000}, launcher: "mpirun (Open MPI)", id: "1737883649", rank: 1, size: 2,
			listen: "127.0.0.1:0", join: "127.0.0.1:7000"},
		{name: "Open MPI 5: PMIx namespace", env: with(ompiEnv, "OMPI_MCA_ess_base_jobid", "-", "PMIX_NAMESPACE", "prterun-h-77@1"),
			launcher: "mpirun (Open MPI)", id: "prterun-h-77@1", rank: 1, size: 2, listen: "127.0.0.1:0",
			join: "127.0.0.1:" + itoa(DefaultPort("mpirun (Open MPI)", "prterun-h-77@1", ""))},
		{name: "mpirun across hosts with -nodehost", env: with(ompiEnv, "OMPI_COMM_WORLD_LOCAL_SIZE", "1"), opt: Options{NodeHost: "h0", Port: 7000},
			launcher: "mpirun (Open MPI)", id: "1737883649", rank: 1, size: 2, join: "h0:7000"},
		{name: "mpirun across hosts, rank 0", env: with(ompiEnv, "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_LOCAL_SIZE", "1"), opt: Options{NodeHost: "h0", Port: 7000},
			launcher: "mpirun (Open MPI)", id: "1737883649", size: 2, listen: "h0:7000", join: "h0:7000"},
		{name: "secret from -token", env: with(ompiEnv, SecretVar, "-"), opt: Options{Secret: "flag"}, launcher: "mpirun (Open MPI)", id: "1737883649",
			rank: 1, size: 2, listen: "127.0.0.1:0", join: "127.0.0.1:" + itoa(ompiPort), tokenSecret: "flag"},
		{name: "hydraEnv one host", env: hydraEnv, opt: Options{Port: 7001}, launcher: "mpiexec (Hydra)", rank: 1, size: 2, listen: "127.0.0.1:0", join: "127.0.0.1:7001"},
		{name: "srun two hosts, rank 2", env: srunEnv, launcher: "srun (Slurm)", id: "4711.0", rank: 2, size: 4,
			join: "node07:" + itoa(srunPort)},
		{name: "srun two hosts, rank 0", env: with(srunEnv, "SLURM_PROCID", "0", "SLURMD_NODENAME", "node07"), launcher: "srun (Slurm)", id: "4711.0", size: 4,
			listen: "node07:" + itoa(srunPort), join: "node07:" + itoa(srunPort)},
		{name: "srun one host", env: with(srunEnv, "SLURM_STEP_NODELIST", "localhost", "SLURM_STEP_NUM_NODES", "1", "SLURM_STEP_TASKS_PER_NODE", "4",
			"SLURMD_NODENAME", "localhost"), launcher: "srun (Slurm)", id: "4711.0", rank: 2, size: 4, listen: "127.0.0.1:0", join: "127.0.0.1:" + itoa(srunPort)},
		{name: "srun --mpi=pmi2 sets PMI_RANK too", env: with(srunEnv, "PMI_RANK", "2", "PMI_SIZE", "4"), launcher: "srun (Slurm)", id: "4711.0", rank: 2, size: 4,
			join: "node07:" + itoa(srunPort)},
		{name: "mpirun inside an allocation: Open MPI wins", env: with(ompiEnv, "SLURM_PROCID", "0", "SLURM_STEP_NODELIST", "node07", "SLURM_STEP_NUM_TASKS", "1"),
			launcher: "mpirun (Open MPI)", id: "1737883649", rank: 1, size: 2, listen: "127.0.0.1:0", join: "127.0.0.1:" + itoa(ompiPort)},
		{name: "srun without optional counts", env: with(srunEnv, "SLURM_STEP_NUM_TASKS", "-", "SLURM_STEP_NUM_NODES", "-", "SLURM_STEP_TASKS_PER_NODE", "-"),
			launcher: "srun (Slurm)", id: "4711.0", rank: 2, size: 4, join: "node07:" + itoa(srunPort)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := Detect(MapEnv(c.env), c.opt)
			require.NoError(t, err)
			if c.none {
				require.Nil(t, j)
				return
			}
			require.NotNil(t, j)
			require.Equal(t, c.launcher, j.Launcher)
			require.Equal(t, c.id, j.JobID)
			require.Equal(t, c.rank, j.Rank)
			require.Equal(t, c.size, j.Size)
			require.Equal(t, c.listen, j.Listen)
			require.Equal(t, c.join, j.Join)
			secret := "s3cret"
			if c.tokenSecret != "" {
				secret = c.tokenSecret
			}
			require.Equal(t, Token(c.launcher, c.id, secret), j.Token)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Every rank of a job computes the same token and node 0 address; another
// job, or another secret, gets another token.
func TestDetectRanksAgree(t *testing.T) {
	var first *Job
	for r := 0; r < 4; r++ {
		host := "node07"
		if r >= 2 {
			host = "node08"
		}
		j, err := Detect(MapEnv(with(srunEnv, "SLURM_PROCID", strconv.Itoa(r), "SLURMD_NODENAME", host)), Options{})
		require.NoError(t, err)
		if first == nil {
			first = j
		}
		require.Equal(t, first.Token, j.Token)
		require.Equal(t, first.Join, j.Join)
	}
	other, err := Detect(MapEnv(with(srunEnv, "SLURM_JOB_ID", "4712")), Options{})
	require.NoError(t, err)
	require.NotEqual(t, first.Token, other.Token)
	other, err = Detect(MapEnv(with(srunEnv, SecretVar, "another")), Options{})
	require.NoError(t, err)
	require.NotEqual(t, first.Token, other.Token)
	require.Len(t, first.Token, 32)
}

// A launcher's environment that is half there is an error naming the
// variable; nothing is returned to start a job with.
func TestDetectBadInput(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		opt  Options
		says []string
	}{
		{"Open MPI rank without size", with(ompiEnv, "OMPI_COMM_WORLD_SIZE", "-"), Options{}, []string{"OMPI_COMM_WORLD_RANK", `"1"`, "OMPI_COMM_WORLD_SIZE is not"}},
		{"Open MPI size without rank", with(ompiEnv, "OMPI_COMM_WORLD_RANK", "-"), Options{}, []string{"OMPI_COMM_WORLD_RANK is not"}},
		{"Open MPI size not a number", with(ompiEnv, "OMPI_COMM_WORLD_SIZE", "two"), Options{}, []string{`OMPI_COMM_WORLD_SIZE="two"`}},
		{"Open MPI size too large", with(ompiEnv, "OMPI_COMM_WORLD_SIZE", "99999999999999999999"), Options{}, []string{`OMPI_COMM_WORLD_SIZE="99999999999999999999" is too large a number of ranks (at most 9223372036854775807)`}},
		{"Open MPI rank out of range", with(ompiEnv, "OMPI_COMM_WORLD_RANK", "2"), Options{}, []string{`OMPI_COMM_WORLD_RANK="2"`, "0..1"}},
		{"Open MPI negative rank", with(ompiEnv, "OMPI_COMM_WORLD_RANK", "-1"), Options{}, []string{`OMPI_COMM_WORLD_RANK="-1"`}},
		{"Open MPI no job id", with(ompiEnv, "OMPI_MCA_ess_base_jobid", "-", "PMIX_NAMESPACE", "-"), Options{}, []string{"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}},
		{"Open MPI local size bad", with(ompiEnv, "OMPI_COMM_WORLD_LOCAL_SIZE", "3"), Options{}, []string{`OMPI_COMM_WORLD_LOCAL_SIZE="3"`}},
		{"Open MPI across hosts without -nodehost", with(ompiEnv, "OMPI_COMM_WORLD_LOCAL_SIZE", "1"), Options{}, []string{"several hosts", "-nodehost"}},
		{"no secret", with(ompiEnv, SecretVar, "-"), Options{}, []string{SecretVar, "rank 1 of 2", "-token"}},
		{"empty secret", with(ompiEnv, SecretVar, ""), Options{}, []string{SecretVar}},
		{"bad port", ompiEnv, Options{Port: 70000}, []string{"port 70000"}},
		{"Hydra rank without size", with(hydraEnv, "PMI_SIZE", "-"), Options{}, []string{"PMI_SIZE is not"}},
		{"Hydra across hosts without -nodehost", with(hydraEnv, "MPI_LOCALNRANKS", "1"), Options{}, []string{"mpiexec (Hydra)", "-nodehost"}},
		{"srun rank without size", with(srunEnv, "SLURM_STEP_NUM_TASKS", "-", "SLURM_NTASKS", "-"), Options{}, []string{"SLURM_NTASKS is not"}},
		{"srun size without rank", with(srunEnv, "SLURM_PROCID", "-"), Options{}, []string{"SLURM_PROCID is not"}},
		{"srun without a node list", with(srunEnv, "SLURM_STEP_NODELIST", "-"), Options{}, []string{"SLURM_STEP_NODELIST is not set"}},
		{"srun node list does not parse", with(srunEnv, "SLURM_STEP_NODELIST", "node[07-08"), Options{}, []string{"SLURM_STEP_NODELIST", `"node[07-08"`, "never closed"}},
		{"srun fewer hosts than the step has", with(srunEnv, "SLURM_STEP_NODELIST", "node07"), Options{}, []string{`SLURM_STEP_NUM_NODES="2"`, "names 1 hosts"}},
		{"srun more hosts than ranks", with(srunEnv, "SLURM_STEP_NODELIST", "n[1-5]", "SLURM_STEP_NUM_NODES", "5"), Options{}, []string{"names 5 hosts for SLURM_STEP_NUM_TASKS=4"}},
		{"srun tasks per node short of the ranks", with(srunEnv, "SLURM_STEP_TASKS_PER_NODE", "1(x2)"), Options{}, []string{`SLURM_STEP_TASKS_PER_NODE="1(x2)" places 2 ranks`}},
		{"srun tasks per node garbled", with(srunEnv, "SLURM_STEP_TASKS_PER_NODE", "2(y2)"), Options{}, []string{"SLURM_STEP_TASKS_PER_NODE", `"2(y2)"`}},
		{"srun without job id", with(srunEnv, "SLURM_JOB_ID", "-"), Options{}, []string{"SLURM_JOB_ID is not set"}},
		{"srun without step id", with(srunEnv, "SLURM_STEP_ID", "-"), Options{}, []string{"SLURM_STEP_ID is not set"}},
		{"srun rank 0 across hosts without SLURMD_NODENAME", with(srunEnv, "SLURM_PROCID", "0", "SLURMD_NODENAME", "-"), Options{}, []string{"SLURMD_NODENAME is not set"}},
		{"srun rank 0 not on the first host", with(srunEnv, "SLURM_PROCID", "0"), Options{}, []string{"rank 0 runs on node08", "node07", "-nodehost"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := Detect(MapEnv(c.env), c.opt)
			require.Error(t, err)
			require.Nil(t, j, "no half-formed job")
			for _, s := range c.says {
				require.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestListenToward(t *testing.T) {
	got, err := ListenToward("127.0.0.1:9")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:0", got, "loopback is reached from loopback")
	_, err = ListenToward("127.0.0.1")
	require.ErrorContains(t, err, `node 0 at 127.0.0.1`)
}

// A job whose ranks all run on one host, given no secret, gets one of its
// own from Options.LocalSecret; across hosts, a secret is required and the
// error says why.
func TestDetectOwnSecretOnOneHost(t *testing.T) {
	var asked []*Job
	own := Options{LocalSecret: func(j *Job) (string, error) {
		asked = append(asked, j)
		return "made-for-" + j.JobID, nil
	}}
	oneHost := map[string]map[string]string{
		"mpirun":   with(ompiEnv, SecretVar, "-"),
		"mpiexec":  with(hydraEnv, SecretVar, "-", "PMI_JOBID", "kvs_77_0"),
		"srun one": with(srunEnv, SecretVar, "-", "SLURM_STEP_NODELIST", "node07", "SLURM_STEP_NUM_NODES", "1", "SLURM_STEP_TASKS_PER_NODE", "4"),
	}
	for name, env := range oneHost {
		t.Run(name, func(t *testing.T) {
			asked = nil
			j, err := Detect(MapEnv(env), own)
			require.NoError(t, err)
			require.Len(t, asked, 1)
			require.Equal(t, j.JobID, asked[0].JobID)
			require.Equal(t, Token(j.Launcher, j.JobID, "made-for-"+j.JobID), j.Token)
			require.Contains(t, j.Join, "127.0.0.1:", "a job on one host stays on loopback")
			if j.Rank != 0 {
				require.Equal(t, "127.0.0.1:0", j.Listen)
			}
		})
	}
	t.Run("a given secret wins", func(t *testing.T) {
		asked = nil
		j, err := Detect(MapEnv(ompiEnv), own)
		require.NoError(t, err)
		require.Empty(t, asked)
		require.Equal(t, Token("mpirun (Open MPI)", "1737883649", "s3cret"), j.Token)
	})
	t.Run("across hosts", func(t *testing.T) {
		asked = nil
		for _, env := range []map[string]string{with(srunEnv, SecretVar, "-"), with(ompiEnv, SecretVar, "-", "OMPI_COMM_WORLD_LOCAL_SIZE", "1")} {
			_, err := Detect(MapEnv(env), Options{NodeHost: "h0", LocalSecret: own.LocalSecret})
			require.ErrorContains(t, err, "CHARMGO_SECRET is not set, and its ranks run on several hosts: a job across hosts needs the same secret")
		}
		require.Empty(t, asked, "no secret of its own across hosts")
	})
	t.Run("its error is said", func(t *testing.T) {
		_, err := Detect(MapEnv(with(ompiEnv, SecretVar, "-")), Options{LocalSecret: func(*Job) (string, error) {
			return "", errors.New("the directory of job secrets /tmp/x has mode 0755")
		}})
		require.ErrorContains(t, err, "rank 1 of 2, all on this host, and CHARMGO_SECRET is not set: the directory of job secrets /tmp/x has mode 0755")
	})
}

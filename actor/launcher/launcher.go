package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"strconv"
	"strings"
)

// Env looks a variable up in an environment (os.LookupEnv, or a map in
// tests).
type Env func(name string) (string, bool)

// MapEnv is an Env over a map.
func MapEnv(m map[string]string) Env {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

// SecretVar is the environment variable that holds the job's secret under
// a launcher: every rank must see the same value (srun passes the caller's
// environment on; mpirun does on one host, and with -x CHARMGO_SECRET
// across hosts). A job whose ranks all run on one host needs none: it
// makes its own (Options.LocalSecret, JobSecret).
const SecretVar = "CHARMGO_SECRET"

// Options are what the command line says about a launch.
type Options struct {
	// Port is node 0's port; 0 derives one from the job id (DefaultPort).
	Port int
	// NodeHost is node 0's host name or address; "" works it out from the
	// launcher (Slurm: the first host of the step), which Open MPI and
	// Hydra cannot do for ranks on several hosts.
	NodeHost string
	// Secret is the job's secret (-token); "" reads SecretVar.
	Secret string
	// KVSName asks Hydra's PMI server for the job's name (PMIKVSName),
	// Hydra's only per-job value; nil asks nothing, and a Hydra job's
	// token then rests on the secret alone. Detect calls it only for a
	// job of several ranks under Hydra whose environment has PMI_FD and
	// no PMI_JOBID.
	KVSName func() (string, error)
	// LocalSecret makes or finds the secret of a job whose ranks all run
	// on this host, when neither Secret nor SecretVar gives one (JobSecret
	// does, with a file only this user can read); nil makes such a job an
	// error, as one across hosts always is.
	LocalSecret func(j *Job) (string, error)
}

// Job is one process's place in a job that a launcher started.
type Job struct {
	Launcher string // "mpirun (Open MPI)", "mpiexec (Hydra)" or "srun (Slurm)"
	Rank     int    // this process's rank: its node number; rank 0 is node 0
	Size     int    // ranks in the job: its number of nodes
	JobID    string // the launcher's id of the job ("" if it gives none)
	// Listen is the host:port this process listens on (port 0: any free
	// one). "" for a rank other than 0 of a job across hosts: it listens
	// on the address its host reaches Join from (see ListenToward).
	Listen string
	Join   string // node 0's host:port
	Token  string // the job's token, the same in every rank
}

// Detect reads the launcher's variables from env. It returns nil and no
// error when no launcher started this process, or one started a single
// rank (a job of one process needs nothing from it). A launcher's
// environment that is only half there — a rank without a size, a host
// list that does not parse, fewer hosts than the step says — is an error
// naming the variable, so that no rank starts a job the others cannot
// join.
//
// Which launcher: Open MPI's variables (OMPI_COMM_WORLD_*) come first, as
// its mpirun inside a Slurm allocation starts its daemons with srun and
// the ranks see Slurm's variables for those daemons too. Then PMI_RANK
// and PMI_SIZE (MPICH's Hydra, and srun --mpi=pmi2, told apart by
// SLURM_PROCID agreeing with PMI_RANK), then an srun step
// (SLURM_STEP_NODELIST or SLURM_STEP_NUM_TASKS; a batch script or salloc
// shell has SLURM_PROCID and SLURM_NTASKS but not these, and runs as one
// process).
func Detect(env Env, opt Options) (*Job, error) {
	_, ompiR := env("OMPI_COMM_WORLD_RANK")
	_, ompiS := env("OMPI_COMM_WORLD_SIZE")
	_, pmiR := env("PMI_RANK")
	_, pmiS := env("PMI_SIZE")
	_, stepList := env("SLURM_STEP_NODELIST")
	_, stepTasks := env("SLURM_STEP_NUM_TASKS")
	switch {
	case ompiR || ompiS:
		return openMPI(env, opt)
	case (pmiR || pmiS) && !slurmPMI(env):
		return hydra(env, opt)
	case stepList || stepTasks:
		return slurm(env, opt)
	}
	return nil, nil
}

// slurmPMI reports whether PMI_RANK comes from srun (--mpi=pmi2): then
// Slurm's own variables describe the same ranks and hold the node list.
func slurmPMI(env Env) bool {
	p, ok1 := env("PMI_RANK")
	s, ok2 := env("SLURM_PROCID")
	return ok1 && ok2 && p == s
}

// rankSize reads a rank and a size, both required.
func rankSize(env Env, who, rankVar, sizeVar string) (int, int, error) {
	r, rok := env(rankVar)
	s, sok := env(sizeVar)
	switch {
	case !rok:
		return 0, 0, fmt.Errorf("%s: %s is set (%q) but %s is not: the launcher's environment is incomplete", who, sizeVar, s, rankVar)
	case !sok:
		return 0, 0, fmt.Errorf("%s: %s is set (%q) but %s is not: the launcher's environment is incomplete", who, rankVar, r, sizeVar)
	}
	size, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		return 0, 0, fmt.Errorf("%s: %s=%q is too large a number of ranks (at most %d)", who, sizeVar, s, math.MaxInt)
	}
	if err != nil || size < 1 {
		return 0, 0, fmt.Errorf("%s: %s=%q is not a number of ranks (want a whole number of at least 1)", who, sizeVar, s)
	}
	rank, err := strconv.Atoi(r)
	if err != nil || rank < 0 || rank >= size {
		return 0, 0, fmt.Errorf("%s: %s=%q is not a rank of a job of %s=%d (want 0..%d)", who, rankVar, r, sizeVar, size, size-1)
	}
	return rank, size, nil
}

func openMPI(env Env, opt Options) (*Job, error) {
	const who = "mpirun (Open MPI)"
	rank, size, err := rankSize(env, who, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")
	if err != nil || size == 1 {
		return nil, err
	}
	id, ok := env("OMPI_MCA_ess_base_jobid")
	if !ok || id == "" {
		id, ok = env("PMIX_NAMESPACE")
	}
	if !ok || id == "" {
		return nil, fmt.Errorf("%s: neither OMPI_MCA_ess_base_jobid nor PMIX_NAMESPACE is set: no job id to make the job's token from", who)
	}
	local, err := localSize(env, who, "OMPI_COMM_WORLD_LOCAL_SIZE", size)
	if err != nil {
		return nil, err
	}
	return finish(env, opt, &Job{Launcher: who, Rank: rank, Size: size, JobID: id}, local == size, "", "")
}

func hydra(env Env, opt Options) (*Job, error) {
	const who = "mpiexec (Hydra)"
	rank, size, err := rankSize(env, who, "PMI_RANK", "PMI_SIZE")
	if err != nil || size == 1 {
		return nil, err
	}
	id, _ := env("PMI_JOBID") // set by some PMI servers; Hydra keeps its id to the PMI protocol
	if _, fd := env("PMI_FD"); id == "" && fd && opt.KVSName != nil {
		if id, err = opt.KVSName(); err != nil {
			return nil, fmt.Errorf("%s: asking for the job's name to make its token from: %w", who, err)
		}
	}
	local, err := localSize(env, who, "MPI_LOCALNRANKS", size)
	if err != nil {
		return nil, err
	}
	return finish(env, opt, &Job{Launcher: who, Rank: rank, Size: size, JobID: id}, local == size, "", "")
}

// localSize reads the number of ranks on this host; missing, it counts as
// "not all of them", so that a job across hosts is never taken for one on
// loopback.
func localSize(env Env, who, name string, size int) (int, error) {
	v, ok := env(name)
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > size {
		return 0, fmt.Errorf("%s: %s=%q is not a number of ranks on this host (want 1..%d)", who, name, v, size)
	}
	return n, nil
}

func slurm(env Env, opt Options) (*Job, error) {
	const who = "srun (Slurm)"
	sizeVar := "SLURM_STEP_NUM_TASKS"
	if _, ok := env(sizeVar); !ok {
		sizeVar = "SLURM_NTASKS"
	}
	rank, size, err := rankSize(env, who, "SLURM_PROCID", sizeVar)
	if err != nil || size == 1 {
		return nil, err
	}
	list, ok := env("SLURM_STEP_NODELIST")
	if !ok {
		return nil, fmt.Errorf("%s: SLURM_STEP_NODELIST is not set: no host list for the %d ranks", who, size)
	}
	hosts, err := ParseHostList(list)
	if err != nil {
		return nil, fmt.Errorf("%s: SLURM_STEP_NODELIST: %w", who, err)
	}
	if v, ok := env("SLURM_STEP_NUM_NODES"); ok {
		if n, err := strconv.Atoi(v); err != nil || n != len(hosts) {
			return nil, fmt.Errorf("%s: SLURM_STEP_NUM_NODES=%q but SLURM_STEP_NODELIST=%q names %d hosts", who, v, list, len(hosts))
		}
	}
	if len(hosts) > size {
		return nil, fmt.Errorf("%s: SLURM_STEP_NODELIST=%q names %d hosts for %s=%d ranks: a step runs at least one rank on each of its hosts", who, list, len(hosts), sizeVar, size)
	}
	if v, ok := env("SLURM_STEP_TASKS_PER_NODE"); ok {
		per, err := ParseTasksPerNode(v)
		if err != nil {
			return nil, fmt.Errorf("%s: SLURM_STEP_TASKS_PER_NODE: %w", who, err)
		}
		sum := 0
		for _, c := range per {
			sum += c
		}
		if len(per) != len(hosts) || sum != size {
			return nil, fmt.Errorf("%s: SLURM_STEP_TASKS_PER_NODE=%q places %d ranks on %d hosts, but %s=%d and SLURM_STEP_NODELIST=%q names %d hosts",
				who, v, sum, len(per), sizeVar, size, list, len(hosts))
		}
	}
	job, step := "", ""
	if job, ok = env("SLURM_JOB_ID"); !ok || job == "" {
		if job, ok = env("SLURM_JOBID"); !ok || job == "" {
			return nil, fmt.Errorf("%s: SLURM_JOB_ID is not set: no job id to make the job's token from", who)
		}
	}
	if step, ok = env("SLURM_STEP_ID"); !ok || step == "" {
		if step, ok = env("SLURM_STEPID"); !ok || step == "" {
			return nil, fmt.Errorf("%s: SLURM_STEP_ID is not set: no step id to make the job's token from", who)
		}
	}
	self, _ := env("SLURMD_NODENAME")
	return finish(env, opt, &Job{Launcher: who, Rank: rank, Size: size, JobID: job + "." + step}, len(hosts) == 1, self, hosts[0])
}

// finish works out the addresses and the token. oneHost says every rank
// runs on this machine (then everything is on loopback); self is this
// host's name and first the first host of the job, where rank 0 runs
// ("" if the launcher does not say).
//
// Across hosts a rank other than 0 does not listen on its host's name:
// on Debian and others /etc/hosts maps the machine's own name to
// 127.0.1.1, and Slurm's node names need not resolve at all. The address
// its host reaches node 0 from is reachable from node 0 by construction.
func finish(env Env, opt Options, j *Job, oneHost bool, self, first string) (*Job, error) {
	secret := opt.Secret
	if secret == "" {
		secret, _ = env(SecretVar)
	}
	if secret == "" && oneHost && opt.LocalSecret != nil {
		var err error
		if secret, err = opt.LocalSecret(j); err != nil {
			return nil, fmt.Errorf("%s started this process as rank %d of %d, all on this host, and %s is not set: %w; export %s to every rank, or give -token",
				j.Launcher, j.Rank, j.Size, SecretVar, err, SecretVar)
		}
	}
	if secret == "" {
		where := "its ranks run on several hosts"
		if oneHost {
			where = "its ranks run on this host, but no secret of the job's own could be made here"
		}
		return nil, fmt.Errorf("%s started this process as rank %d of %d, but %s is not set, and %s: a job across hosts needs the same secret exported to every rank before launching (for example export %s=$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \\n')), or given with -token",
			j.Launcher, j.Rank, j.Size, SecretVar, where, SecretVar)
	}
	j.Token = Token(j.Launcher, j.JobID, secret)
	port := opt.Port
	if port == 0 {
		port = DefaultPort(j.Launcher, j.JobID, j.Token)
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("%s: port %d of node 0 is not a TCP port", j.Launcher, port)
	}
	node0 := opt.NodeHost
	switch {
	case node0 == "" && oneHost:
		node0 = "127.0.0.1"
	case node0 == "" && first != "":
		node0 = first
	case node0 == "":
		return nil, fmt.Errorf("%s placed the %d ranks on several hosts, and it does not tell them where rank 0 runs: give node 0's host with -nodehost HOST (the same on every rank)", j.Launcher, j.Size)
	}
	j.Join = net.JoinHostPort(node0, strconv.Itoa(port))
	if j.Rank == 0 {
		if !oneHost && opt.NodeHost == "" && self != first {
			if self == "" {
				return nil, fmt.Errorf("%s: SLURMD_NODENAME is not set: rank 0 cannot tell whether it runs on the first host of the job (%s), where the other ranks look for it", j.Launcher, first)
			}
			return nil, fmt.Errorf("%s: rank 0 runs on %s, not on the first host of the job (%s): give node 0's host with -nodehost HOST", j.Launcher, self, first)
		}
		// Node 0 listens on the very address the others join: the
		// actor system's address is what they send to.
		j.Listen = j.Join
	} else if oneHost {
		j.Listen = "127.0.0.1:0"
	}
	return j, nil
}

// ListenToward returns an address to listen on, with any free port, that
// is reachable from join's host: the local address that this host's
// routing table picks to reach join (a UDP socket is connected, which
// sends nothing). It resolves join's host name.
func ListenToward(join string) (string, error) {
	c, err := net.Dial("udp", join)
	if err != nil {
		return "", fmt.Errorf("finding this host's address toward node 0 at %s: %w", join, err)
	}
	defer c.Close()
	ip := c.LocalAddr().(*net.UDPAddr).IP
	return net.JoinHostPort(ip.String(), "0"), nil
}

// Token makes a job's token from the launcher, its job id and the secret:
// every rank computes the same one, and a process that does not know the
// secret cannot, even knowing the job id.
func Token(launcher, jobID, secret string) string {
	h := sha256.New()
	for _, s := range []string{"charmgo launch", launcher, jobID, secret} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// DefaultPort derives node 0's port from the job id (from the token if the
// launcher gives no id): in 20000..29999, below Linux's ephemeral ports,
// and different for jobs that share a host unless their ids collide (one
// chance in 10,000; give -jobport then).
func DefaultPort(launcher, jobID, token string) int {
	h := fnv.New32a()
	key := jobID
	if key == "" {
		key = token
	}
	h.Write([]byte(launcher + "\x00" + key))
	return 20000 + int(h.Sum32()%10000)
}

// Started reports whether any launcher's rank or size variable is set,
// whatever the number of ranks.
func Started(env Env) bool {
	for _, v := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_STEP_NODELIST", "SLURM_STEP_NUM_TASKS"} {
		if _, ok := env(v); ok {
			return true
		}
	}
	return false
}

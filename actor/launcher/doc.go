// Package launcher lets a program that an MPI or Slurm launcher started
// find its place in the job. The variables it reads:
//
//   - Open MPI's mpirun: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,
//     OMPI_COMM_WORLD_LOCAL_SIZE (ranks on this host) and the job id
//     OMPI_MCA_ess_base_jobid, or PMIX_NAMESPACE (Open MPI 5).
//   - MPICH's Hydra mpiexec: PMI_RANK, PMI_SIZE, MPI_LOCALNRANKS, and
//     PMI_JOBID where a PMI server sets it (see below for Hydra's).
//   - Slurm's srun: SLURM_PROCID, SLURM_STEP_NUM_TASKS (or SLURM_NTASKS
//     where a step does not set it), SLURM_STEP_NODELIST in Slurm's
//     host-list syntax, SLURM_STEP_NUM_NODES and SLURM_STEP_TASKS_PER_NODE
//     (checked against the list when set), SLURM_JOB_ID and SLURM_STEP_ID
//     (or SLURM_JOBID and SLURM_STEPID), and SLURMD_NODENAME.
//   - CHARMGO_SECRET (SecretVar): the job's secret, needed across hosts.
//
// Detect reads an environment and returns the rank (the node number; rank
// 0 is node 0), the number of ranks, the address to listen on, node 0's
// address and the job's token; ParseHostList expands host lists such as
// "node[01-04,07]". Both are pure: they take the environment as a
// function and do no I/O of their own (what needs I/O comes in through
// Options), and package chare calls them from ParseArgs.
//
// The token is a hash of the launcher, its job id and a secret: a
// launcher's job id alone is known to every user of the machine. Across
// hosts the user exports the same secret to every rank (CHARMGO_SECRET,
// or -token), and a rank without one refuses to start, saying so. A job
// whose ranks all run on one host needs none: rank 0 writes a random
// secret to a file that only the user can read, in a directory only the
// user can enter (JobSecret, SecretDir), the other ranks read it, and
// rank 0 removes it once every rank has joined (a rank 0 killed before
// leaves it, and a later rank 0 removes files whose writer is gone);
// such a job listens on loopback only. Hydra sets no job id in
// the environment: its ranks ask its PMI server (PMI_FD) for the job's
// key-value-space name instead (PMIKVSName, the one exchange with a
// launcher here, which Detect makes through Options.KVSName). Node 0 listens on a
// port from -jobport or, by default, one derived from the job id; the
// other ranks listen on any free port and tell node 0.
//
// Where rank 0 runs: on one host (all ranks local, as Open MPI and Hydra
// say through OMPI_COMM_WORLD_LOCAL_SIZE and MPI_LOCALNRANKS, or a Slurm
// step of one host) everything is on loopback. A Slurm step on several
// hosts puts rank 0 on the first host of its node list, where it listens
// on that name (checked against SLURMD_NODENAME). Open MPI and Hydra do
// not tell a rank where rank 0 runs without their PMI/PMIx client
// library, so a job of theirs across hosts needs -nodehost HOST. Across
// hosts, the other ranks listen on the address their host reaches node 0
// from (ListenToward, the one function here that touches the network
// stack), not on a host name that may resolve to loopback.
package launcher

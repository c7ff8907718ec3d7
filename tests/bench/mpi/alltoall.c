#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	int bytes = atoi(argv[1]), iters = atoi(argv[2]), reps = atoi(argv[3]);
	char *s = malloc((size_t)bytes * p + 1), *r = malloc((size_t)bytes * p + 1);
	for (int i = 0; i < bytes * p; i++) s[i] = (char)(rank * 37 + i / (bytes ? bytes : 1));
	MPI_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD); /* warm-up */
	for (int k = 0; k < reps; k++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD);
		double t = (MPI_Wtime() - t0) / iters, worst;
		MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0) printf("%.3f\n", worst * 1e6);
	}
	for (int j = 0; j < p; j++)
		if (bytes > 0 && r[j * bytes] != (char)(j * 37 + rank)) { fprintf(stderr, "rank %d: wrong block from %d\n", rank, j); MPI_Abort(MPI_COMM_WORLD, 1); }
	MPI_Finalize();
	return 0;
}

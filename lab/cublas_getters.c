// Host cost of what the cuBLAS entry layer asks per call on hyblas's route (src/abi/cublas.rs
// `context`, `runtime`): the handle's stream, pointer mode and atomics mode through the real
// getters, and the current context. On the H200 host (session 10): 8 ns per getter, 13 ns for
// cuCtxGetCurrent, so about 40 ns a call, 1% of a 4 us call; the 3-5% entry/cuBLAS spread of
// such calls in gpubench is the host's launch-rate jitter, not this.
//
//   gcc -O2 -o /tmp/getters lab/cublas_getters.c -ldl && /tmp/getters
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
typedef int (*create_t)(void**);
typedef int (*gs_t)(void*, void**);
typedef int (*gm_t)(void*, int*);
typedef int (*ctx_t)(void**);
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){
  void* cb=dlopen("libcublas.so.13",RTLD_NOW|RTLD_GLOBAL); if(!cb){printf("no cublas %s\n",dlerror());return 1;}
  void* cu=dlopen("libcuda.so.1",RTLD_NOW);
  create_t cr=(create_t)dlsym(cb,"cublasCreate_v2");
  gs_t gs=(gs_t)dlsym(cb,"cublasGetStream_v2");
  gm_t gp=(gm_t)dlsym(cb,"cublasGetPointerMode_v2");
  gm_t ga=(gm_t)dlsym(cb,"cublasGetAtomicsMode");
  ctx_t cc=(ctx_t)dlsym(cu,"cuCtxGetCurrent");
  void* h; int rc=cr(&h); printf("create rc=%d\n",rc);
  const int N=2000000; void* s; int m; double t;
  for(int rep=0;rep<2;rep++){
  t=now(); for(int i=0;i<N;i++) gs(h,&s); printf("cublasGetStream_v2    %.1f ns\n",(now()-t)/N*1e9);
  t=now(); for(int i=0;i<N;i++) gp(h,&m); printf("cublasGetPointerMode  %.1f ns\n",(now()-t)/N*1e9);
  t=now(); for(int i=0;i<N;i++) ga(h,&m); printf("cublasGetAtomicsMode  %.1f ns\n",(now()-t)/N*1e9);
  t=now(); for(int i=0;i<N;i++) cc(&s); printf("cuCtxGetCurrent       %.1f ns\n",(now()-t)/N*1e9);
  }
  return 0;
}

// The CS 267 starters' init_particles, verbatim in logic: the reference for sim/particles/init.py.
// usage: starter_init 2020|legacy N SEED  -> prints x y vx vy per particle with %.17g
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char** argv) {
    bool legacy = std::strcmp(argv[1], "legacy") == 0;
    int n = std::atoi(argv[2]);
    int seed = std::atoi(argv[3]);
    double size = std::sqrt(0.0005 * n);
    int sx = (int)std::ceil(std::sqrt((double)n));
    int sy = (n + sx - 1) / sx;
    std::vector<int> shuffle(n);
    for (int i = 0; i < n; i++) shuffle[i] = i;
    std::mt19937 gen(seed);
    srand48(seed);
    for (int i = 0; i < n; i++) {
        int j;
        if (legacy) {
            j = lrand48() % (n - i);
        } else {
            std::uniform_int_distribution<int> rand_int(0, n - i - 1);
            j = rand_int(gen);
        }
        int k = shuffle[j];
        shuffle[j] = shuffle[n - i - 1];
        double x = size * (1. + (k % sx)) / (1 + sx);
        double y = size * (1. + (k / sx)) / (1 + sy);
        double vx, vy;
        if (legacy) {
            vx = drand48() * 2 - 1;
            vy = drand48() * 2 - 1;
        } else {
            std::uniform_real_distribution<float> rand_real(-1.0, 1.0);
            vx = rand_real(gen);
            vy = rand_real(gen);
        }
        std::printf("%.17g %.17g %.17g %.17g\n", x, y, vx, vy);
    }
}

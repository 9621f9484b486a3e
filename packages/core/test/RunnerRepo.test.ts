import * as RunnerRepo from "../src/RunnerRepo.js"
import { runnerRepoContract } from "../src/testing/RunnerRepoContract.js"

runnerRepoContract("RunnerRepo.layerMemory", RunnerRepo.layerMemory)
